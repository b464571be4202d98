/// Where one play's PCM comes from: the engine pulls frames from it on the decode thread and
/// never learns what is behind it (a decoded file today; a speech render, a pipe, an http
/// download, a live stream later). Like SFBAudioEngine's decoders and MPD's decoder plugins,
/// it only reads and seeks; the engine decides when, and completion comes from frames heard.
/// One play, one thread: a source is read and sought from its play's decode thread only.
public protocol Source: AnyObject {
    /// What messages call it: a file's path (later a URL, or the text being spoken).
    var name: String { get }
    /// Rate, channels and what the samples are.
    var format: SourceFormat { get }
    /// Sample formats `read` can produce. Always contains `.float32`.
    var readableFormats: Set<SampleFormat> { get }
    /// Its length as known now; it may become exact while it plays (a count finishes).
    var duration: SourceDuration { get }
    /// The length once no count is under way, waiting for one that is (a play that ended
    /// before its count did).
    func settledDuration() -> SourceDuration
    /// `seek` works: `--start`, `--loops` and resuming at a frame need it. No default: a live
    /// source must not claim it can seek by leaving this out.
    var canSeek: Bool { get }
    /// Where an interrupted play of it goes on. No default, for the same reason.
    var resumption: Resumption { get }
    /// Its input arrives while it is read (a download): reads are kept small, so the first of
    /// it plays while the rest comes, and a read waits only for what it gives.
    var arrivesWhileRead: Bool { get }
    /// Where a `.sentenceStart` source goes on when `frame` was the last one heard: the first
    /// frame of the sentence it is in, at most `frame`. Asked of no other kind.
    func resumeFrame(forHeard frame: Int64) -> Int64
    /// How much of it was heard when `frame` was the last frame heard, for the drop-after rule,
    /// when it counts in units of its own (speech: sentences heard to their end); nil: frames.
    func heardFraction(forHeard frame: Int64) -> Double?
    /// Reads up to `frames` interleaved frames into `buffer` as `format`; returns frames read,
    /// 0 at the end. May block for input (a pipe, a download), never forever.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError) -> Int
    /// Moves so the next read starts at `frame`, exactly. Only when `canSeek`.
    func seek(toFrame frame: Int64) throws(AnnounceError)
    /// What reading found wrong, for the play's report: "truncated: 0.9 of 261.0 s".
    var warning: String? { get }
    /// Frames of this source's own timeline (the one `duration`, `seek` and resume points are
    /// in) behind the first `frames` frames `read` gave since it was made, seeks not counted:
    /// every pass, in order. The identity but for a source that reshapes what it reads (tempo,
    /// skipped silence), so that progress, lengths and resume points stay in source time.
    /// Asked on the play's thread, like `read`.
    func sourceFrames(forRead frames: Int64) -> Int64
}

/// A source that gives another's frames changed (leveled, reshaped): what it does not say of
/// itself is the wrapped source's.
public protocol WrappingSource: Source {
    var wrapped: any Source { get }
}

extension WrappingSource {
    public var name: String { wrapped.name }
    public var duration: SourceDuration { wrapped.duration }
    public func settledDuration() -> SourceDuration { wrapped.settledDuration() }
    public var canSeek: Bool { wrapped.canSeek }
    public var resumption: Resumption { wrapped.resumption }
    public var arrivesWhileRead: Bool { wrapped.arrivesWhileRead }
    public func resumeFrame(forHeard frame: Int64) -> Int64 { wrapped.resumeFrame(forHeard: frame) }
    public func heardFraction(forHeard frame: Int64) -> Double? { wrapped.heardFraction(forHeard: frame) }
    public var warning: String? { wrapped.warning }
}

/// A source's PCM as it comes out, and what it was coded as.
public struct SourceFormat: Equatable, Sendable {
    public var sampleRate: Int
    public var channels: Int
    /// The sample format that reproduces the source exactly (int16 for 16-bit PCM): a device
    /// opened in it plays the source untouched.
    public var exactSampleFormat: SampleFormat
    /// The container and codec it was decoded from; nil for PCM made here (a speech engine's).
    public var container: Container?
    public var codec: Codec?

    public init(
        sampleRate: Int, channels: Int, exactSampleFormat: SampleFormat, container: Container? = nil,
        codec: Codec? = nil
    ) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.exactSampleFormat = exactSampleFormat
        self.container = container
        self.codec = codec
    }
}

/// A source's length in frames, as far as it is known.
public enum SourceDuration: Equatable, Sendable {
    /// Known to the frame: a header that counts them, or a finished count.
    case exact(Int64)
    /// A guess (nil: none yet) that becomes exact later: an MP3 without an Info header, or a
    /// FLAC whose header says 0, while a count runs alongside the play.
    case estimated(Int64?)
    /// Known only at the end: a live stream, a pipe, a speech render.
    case unknown

    /// The best figure there is: exact, else the estimate.
    public var frames: Int64? {
        switch self {
        case .exact(let frames): frames
        case .estimated(let frames): frames
        case .unknown: nil
        }
    }

    /// Nil until known to the frame.
    public var exactFrames: Int64? {
        if case .exact(let frames) = self { frames } else { nil }
    }

    /// An exact figure is on its way.
    public var isEstimate: Bool {
        if case .estimated = self { true } else { false }
    }
}

/// Where an interrupted play of a source goes on.
public enum Resumption: Equatable, Sendable {
    /// At the frame it was heard to (a file).
    case exactFrame
    /// At the start of the sentence it was in (speech), never mid-word: `resumeFrame(forHeard:)`.
    case sentenceStart
    /// Wherever the stream is now (live radio): what went by while interrupted is not replayed.
    case liveRejoin
}

extension Source {
    public func settledDuration() -> SourceDuration { duration }
    public func resumeFrame(forHeard frame: Int64) -> Int64 { frame }
    public func heardFraction(forHeard frame: Int64) -> Double? { nil }
    public var warning: String? { nil }
    public func sourceFrames(forRead frames: Int64) -> Int64 { frames }
    public var arrivesWhileRead: Bool { false }

    /// The first frame of a play that starts at `start` (nil: the beginning) and repeats `loops`
    /// more times, or why it cannot (64): the one rule for `--start` against a source.
    public func startFrame(_ start: TimeSpan?, loops: Int = 0) throws(AnnounceError) -> Int64 {
        if loops != 0 && !canSeek { throw .usage("\(name): --loops needs a source that can seek; this one plays once") }
        let frame = start.map { $0.frames(atRate: format.sampleRate) } ?? 0
        guard let start, frame > 0 else { return frame }
        if !canSeek { throw .usage("\(name): --start needs a source that can seek; this one plays from its beginning") }
        if let problem = PlaybackOptions.startProblem(
            start, sampleRate: format.sampleRate, frames: duration.frames, name: name)
        {
            throw problem
        }
        return frame
    }
}
