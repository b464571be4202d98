import AnnounceModel

/// Any source with `--rate`, `--pitch` and `--skip-silence` applied: silence is cut first
/// (`SilenceSkipper`), then tempo and pitch change (`TimeStretcher`). It runs where the source is read,
/// on the play's decode thread, never on the real-time one. It gives float frames at the
/// source's rate and channels; its length, seeks and resume points stay the source's, and
/// `sourceFrames(forRead:)` maps what it gave back to source time (`ReshapedTimeline`).
public final class ReshapedSource: WrappingSource {
    private let inner: any Source
    private let reshaping: Reshaping
    public let format: SourceFormat
    public let readableFormats: Set<SampleFormat> = [.float32]
    private let channels: Int
    private var stretcher: TimeStretcher?
    private let skipper: SilenceSkipper?
    private var timeline: ReshapedTimeline
    /// One read of the source.
    private let chunk: UnsafeMutablePointer<Float>
    /// Kept frames waiting to be read, when tempo and pitch stay (silence skipping alone).
    private var fifo: FrameFIFO
    /// Frames given out since it was made.
    private var given: Int64 = 0
    /// The source's pass ended: what is left is the stretcher's flushed tail.
    private var passEnded = false

    /// Source frames per read.
    static let chunkFrames = 4096
    /// How far back `sourceFrames(forRead:)` may be asked, in seconds: far more than the engine's
    /// ring and the device's buffer hold.
    static let memorySeconds = 600

    /// `source` itself when `reshaping` changes nothing (it plays sample for sample), else reshaped.
    public static func applying(_ reshaping: Reshaping, to source: any Source) throws(AnnounceError) -> any Source {
        reshaping.isIdentity ? source : try ReshapedSource(source, reshaping)
    }

    public init(_ source: any Source, _ reshaping: Reshaping) throws(AnnounceError) {
        inner = source
        self.reshaping = reshaping
        let input = source.format
        channels = input.channels
        // Float out, whatever the source was.
        format = input.asFloat32
        skipper = reshaping.silence.map {
            SilenceSkipper(channels: input.channels, sampleRate: input.sampleRate, rule: $0)
        }
        timeline = ReshapedTimeline(tempo: reshaping.rate, memory: Int64(input.sampleRate * Self.memorySeconds))
        chunk = .allocate(capacity: Self.chunkFrames * input.channels)
        fifo = FrameFIFO(channels: input.channels)
        stretcher = try makeStretcher()
    }

    deinit { chunk.deallocate() }

    public var wrapped: any Source { inner }

    public func sourceFrames(forRead frames: Int64) -> Int64 { timeline.sourceFrames(forOutput: frames) }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int
    {
        precondition(format == .float32, "a reshaped source reads as float only")
        let output = buffer.assumingMemoryBound(to: Float.self)
        var produced = 0
        while produced < frames {
            let got = drain(into: output + produced * channels, frames: frames - produced)
            produced += got
            given += Int64(got)
            if got > 0 { continue }
            if passEnded { break }
            try pull()
        }
        // The pass is out to its last frame: the counts are exact here.
        if produced == 0 { timeline.observe(output: given) }
        return produced
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        try inner.seek(toFrame: frame)
        // What was in flight belongs to the old position: dropped, and the new one starts afresh.
        skipper?.endPass(timeline: &timeline)
        stretcher = nil
        stretcher = try makeStretcher()
        fifo.removeAll()
        passEnded = false
        timeline.observe(output: given)
    }

    /// The tempo and pitch stage; nil when neither changes.
    private func makeStretcher() throws(AnnounceError) -> TimeStretcher? {
        guard reshaping.changesTempoOrPitch else { return nil }
        return try TimeStretcher(
            channels: channels, sampleRate: format.sampleRate, rate: reshaping.rate,
            semitones: reshaping.semitones, name: name)
    }

    /// Reads the source once, through the silence skipper, into the stretcher or the fifo.
    private func pull() throws(AnnounceError) {
        let got = try inner.read(into: chunk, frames: Self.chunkFrames, as: .float32)
        guard got > 0 else {
            skipper?.endPass(timeline: &timeline)
            try stretcher?.finish()
            passEnded = true
            return
        }
        if let skipper {
            try skipper.process(chunk, frames: got, timeline: &timeline) { frames, count throws(AnnounceError) in
                try feed(frames, count)
            }
        } else {
            timeline.keep(Int64(got))
            try feed(chunk, got)
        }
        // What the stretcher has given for what it has taken, less what it still holds.
        if let stretcher {
            timeline.observe(
                output: given + Int64(stretcher.readyFrames), kept: timeline.kept - stretcher.heldSourceFrames)
        }
    }

    private func feed(_ frames: UnsafePointer<Float>, _ count: Int) throws(AnnounceError) {
        if let stretcher {
            try stretcher.write(frames, count)
        } else {
            fifo.append(frames, count: count)
        }
    }

    /// Frames ready to give out: the stretcher's, or the fifo's.
    private func drain(into output: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        if let stretcher { return stretcher.read(into: output, frames: frames) }
        return fifo.read(into: output, frames: frames)
    }
}
