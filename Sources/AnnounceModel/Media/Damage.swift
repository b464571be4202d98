/// What decoding found wrong with a file: `info` shows it, a play warns with it.
public enum Damage: Hashable, Sendable, CustomStringConvertible {
    /// The input ended early: before the length its header gives (`promised`), or, with no
    /// length to compare with, before a proper end.
    case truncated(played: Int64, promised: Int64?, sampleRate: Int)
    /// Data that does not decode was skipped and decoding resumed after it.
    case skipped
    /// More than one Ogg stream (chained or multiplexed): only the first plays.
    case moreStreams
    /// The stream changes format part-way: what follows the change does not play.
    case formatChange
    /// The decoding library stopped early; its words.
    case stopped(String)

    public var isTruncation: Bool {
        if case .truncated = self { true } else { false }
    }

    /// "truncated: 0.9 of 261.0 s", "truncated: 14.0 s", "damaged data skipped".
    public var description: String {
        switch self {
        case .truncated(let played, let promised?, let rate):
            "truncated: \(Self.tenths(played, rate)) of \(Self.tenths(promised, rate)) s"
        case .truncated(let played, nil, let rate): "truncated: \(Self.tenths(played, rate)) s"
        case .skipped: "damaged data skipped"
        case .moreStreams: "more than one Ogg stream (chained or multiplexed): only the first plays"
        case .formatChange: "format changes mid-stream; stopped at the change"
        case .stopped(let words): words
        }
    }

    private static func tenths(_ frames: Int64, _ rate: Int) -> String {
        String(describing: (Double(frames) * 10 / Double(rate)).rounded() / 10)
    }
}
