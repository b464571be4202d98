/// `announce play --stream URL`: live radio the daemon opens itself when the item plays
/// (DESIGN §4, Live streams). Never seekable: an interrupted play rejoins it live, and what
/// went by meanwhile is not replayed. `Clip.path` is the URL too, as messages show it.
public struct LiveStream: Codable, Equatable, Sendable {
    /// An http or https URL.
    public var url: String
    /// `--duration`: seconds of it heard, then it ends `played`; nil: until it is stopped.
    public var seconds: Double?
    /// `--persist`: a daemon restart resumes it (rejoining live); nil: the restart ends it
    /// `cancelled`, since the stream has gone on without it.
    public var persist: Bool?

    public init(url: String, seconds: Double? = nil, persist: Bool? = nil) {
        self.url = url
        self.seconds = seconds
        self.persist = persist
    }

    /// The schemes a live stream is read over.
    public static let schemes = ["http", "https"]

    /// The stream's `--duration` as frames at `sampleRate`; nil when it plays until stopped.
    public func frames(atRate sampleRate: Int) -> Int64? {
        seconds.map { TimeSpan(seconds: $0).frames(atRate: sampleRate) }
    }

    /// Why `url` cannot be a live stream's, or nil.
    public static func urlProblem(_ url: String) -> LiveStreamProblem? {
        let lowered = url.lowercased()
        guard let scheme = schemes.first(where: { lowered.hasPrefix($0 + "://") }) else { return .scheme(url) }
        if url.utf8.contains(0) || url.utf8.count > Limits.maxPathBytes { return .url }
        if url.utf8.dropFirst(scheme.utf8.count + 3).first.map({ $0 == UInt8(ascii: "/") }) ?? true { return .url }
        return nil
    }
}

/// What is wrong with a clip's `stream`, decided once: the daemon says it in the request's field
/// names (`description`), the CLI in its options' (Play.swift `optionText`).
public enum LiveStreamProblem: Equatable, Sendable, CustomStringConvertible {
    /// Not an http or https URL.
    case scheme(String)
    /// Longer than `Limits.maxPathBytes`, a NUL byte, or no host.
    case url
    /// `seconds` not above 0 and at most `TimeSpan.longest`.
    case seconds
    /// With `speech` or `media`: a clip is one kind of input.
    case notOneInput
    /// `loops` or `start`: a live stream cannot seek.
    case seeks
    /// `rate` or `skipSilence`: a live stream comes at its own pace, and these consume it at another.
    case changesPace

    public var description: String {
        switch self {
        case .scheme(let url): "stream.url must be an http or https URL, not \(url)"
        case .url: "stream.url must name a host, be at most \(Limits.maxPathBytes) bytes and have no NUL byte"
        case .seconds: "stream.seconds must be above 0 and at most \(TimeSpan.longest.seconds)"
        case .notOneInput: "stream comes without speech and media"
        case .seeks: "a stream cannot seek: no loops, no start"
        case .changesPace: "a stream plays at its own pace: no rate, no skipSilence"
        }
    }
}

extension Clip {
    /// The rules a clip with a `stream` keeps; nil for one without.
    public var streamProblem: LiveStreamProblem? {
        guard let stream else { return nil }
        if speech != nil || media != nil { return .notOneInput }
        if let problem = LiveStream.urlProblem(stream.url) { return problem }
        if let seconds = stream.seconds, !(seconds > 0 && seconds <= TimeSpan.longest.seconds) { return .seconds }
        if loops != 0 || start != nil { return .seeks }
        if rate != nil || skipSilence == true { return .changesPace }
        return nil
    }
}
