/// How one clip is played (AVAudioPlayer's volume, pan, numberOfLoops, currentTime).
public struct PlaybackOptions: Equatable, Sendable {
    /// Linear gain; 1 leaves samples untouched.
    public var gain: Float = 1
    /// -1 full left … 1 full right. A mono clip with a pan plays in stereo.
    public var pan: Float = 0
    /// Extra passes after the first; -1 repeats until stopped.
    public var loops: Int = 0
    /// Where the first pass starts; later passes start at 0.
    public var start: TimeSpan?
    /// A linear ramp up from silence at the start (a resumed clip).
    public var fadeIn: TimeSpan?
    /// Silence written first when the play opens its device (`wake-up`): a sink that sleeps
    /// wakes before the first syllable. It counts in no position; `started` waits for the clip.
    public var wakeUp: TimeSpan?
    /// The device this play opens stays open writing silence once nothing plays (`keep-open`),
    /// until the engine is told to close it: a sink that sleeps is not woken twice.
    public var keepsDeviceOpen = false

    public init(gain: Float = 1, pan: Float = 0, loops: Int = 0, start: TimeSpan? = nil, fadeIn: TimeSpan? = nil) {
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.start = start
        self.fadeIn = fadeIn
    }
}

extension PlaybackOptions {
    /// `start` at or past the end of a file of `info`: a usage error (64) naming `path`.
    public func startProblem(in info: AudioFileInfo, path: String) -> AnnounceError? {
        Self.startProblem(start, sampleRate: info.sampleRate, frames: info.frames, name: path)
    }

    /// The one rule for `--start` against a length (the client's check of a file, the engine's
    /// of a source): at or past the end is a usage error (64); an unknown length passes.
    public static func startProblem(_ start: TimeSpan?, sampleRate: Int, frames: Int64?, name: String) -> AnnounceError?
    {
        guard let start, let frames else { return nil }
        let startFrame = start.frames(atRate: sampleRate)
        guard startFrame > 0, startFrame >= frames else { return nil }
        return startPastEnd(start, name: name, end: "\(TimeSpan(seconds: Double(frames) / Double(sampleRate)))")
    }

    /// `start` at or past where `name`'s audio ends (`end` says where): 64.
    public static func startPastEnd(_ start: TimeSpan, name: String, end: String) -> AnnounceError {
        .usage("\(name): --start \(start) is at or past the end (\(end))")
    }

    /// Frames in the whole program: every pass, the first from `startFrame`; nil when it loops
    /// forever, the file's length is unknown, or the count would overflow.
    public static func programFrames(fileFrames: Int64?, startFrame: Int64, loops: Int) -> Int64? {
        guard loops >= 0, let fileFrames else { return nil }
        let (passes, overflow) = fileFrames.multipliedReportingOverflow(by: Int64(loops) + 1)
        return overflow ? nil : passes - startFrame
    }
}
