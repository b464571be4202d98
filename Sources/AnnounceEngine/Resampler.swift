import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import CSpeexDSP

/// Converts interleaved float32 audio from one sample rate to another with
/// speexdsp's windowed-sinc resampler, for streams whose rate is not the open
/// device's. Runs on the decode side, never on the playback thread.
///
/// The output is time-aligned with the input: the filter's leading delay is
/// skipped, so input frame k comes out at output frame ≈ k · out / in, and
/// `finish` flushes the filter's tail so n input frames give exactly
/// `outputFrames(forInputFrames: n)` = round(n · out / in) output frames.
///
/// `process` and `finish` never allocate (the filter is built in `init`).
/// Not thread-safe: one thread at a time.
public final class Resampler {
    /// speexdsp's "desktop" quality: for 44.1 → 48 kHz stereo, 9 ms CPU per second of audio (16 streams ≈ 14 % of
    /// one EPYC core), flat to 19 kHz (−0.85 dB at 20 kHz), aliases at −105 dB; 4 costs 7 ms but aliases at −86 dB.
    public static let defaultQuality = 5

    public let channels: Int
    public let inputRate: Int
    public let outputRate: Int
    public let quality: Int
    /// How many input frames the filter looks ahead: the delay `finish` flushes.
    public let latencyFrames: Int

    private let state: OpaquePointer
    private var consumedFrames = 0
    private var producedFrames = 0
    /// Silence still to feed at the end so the last input frames come out
    /// (the look-ahead plus a margin; the output is capped at the exact length).
    private var tailFramesLeft: Int

    public init(channels: Int, inputRate: Int, outputRate: Int, quality: Int = Resampler.defaultQuality)
        throws(AnnounceError)
    {
        let limit = Int(UInt32.max)
        guard (1...limit).contains(channels) else { throw .internal("resampler: \(channels) channels") }
        guard (1...limit).contains(inputRate), (1...limit).contains(outputRate) else {
            throw .internal("resampler: cannot convert \(inputRate) Hz to \(outputRate) Hz")
        }
        guard (0...10).contains(quality) else { throw .internal("resampler: quality \(quality) is not in 0...10") }
        var error: Int32 = 0
        guard
            let state = speex_resampler_init(
                UInt32(channels), UInt32(inputRate), UInt32(outputRate), Int32(quality), &error)
        else {
            throw .internal(
                "resampler: \(String(cString: speex_resampler_strerror(error))) (\(inputRate) Hz to \(outputRate) Hz)")
        }
        // The first output frame is then input frame 0, not the filter's zero history.
        speex_resampler_skip_zeros(state)
        self.state = state
        self.channels = channels
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.quality = quality
        latencyFrames = Int(speex_resampler_get_input_latency(state))
        tailFramesLeft = Self.tailFrames(latency: latencyFrames, inputRate: inputRate, outputRate: outputRate)
    }

    deinit { speex_resampler_destroy(state) }

    /// The whole output for `frames` input frames: round(frames · out / in).
    public func outputFrames(forInputFrames frames: Int) -> Int {
        (frames * outputRate + inputRate / 2) / inputRate
    }

    /// An output buffer of this many frames lets `process` take all of `frames`
    /// in one call, and lets `finish` flush the whole tail in one call.
    public func outputCapacity(forInputFrames frames: Int) -> Int {
        ((frames + latencyFrames) * outputRate + inputRate - 1) / inputRate + 2
    }

    /// Resamples up to `frames` interleaved input frames into at most `capacity`
    /// output frames. Input it did not consume (output full) must be passed again.
    public func process(
        _ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>,
        capacity: Int
    ) -> (consumed: Int, produced: Int) {
        precondition(frames >= 0 && capacity >= 0, "Resampler.process: negative count")
        var inLength = UInt32(min(frames, Int(UInt32.max)))
        var outLength = UInt32(min(capacity, Int(UInt32.max)))
        speex_resampler_process_interleaved_float(state, input, &inLength, output, &outLength)
        consumedFrames += Int(inLength)
        producedFrames += Int(outLength)
        return (Int(inLength), Int(outLength))
    }

    /// At the end of the input: writes the filter's remaining output (the last
    /// `latencyFrames` input frames' worth), at most `capacity` frames a call.
    /// Returns 0 once everything is out; a new input needs a new resampler.
    public func finish(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        precondition(capacity >= 0, "Resampler.finish: negative capacity")
        let wanted = min(capacity, outputFrames(forInputFrames: consumedFrames) - producedFrames, Int(UInt32.max))
        guard wanted > 0, tailFramesLeft > 0 else { return 0 }
        var inLength = UInt32(tailFramesLeft)
        var outLength = UInt32(wanted)
        // No input buffer: speexdsp feeds zeros.
        speex_resampler_process_interleaved_float(state, nil, &inLength, output, &outLength)
        tailFramesLeft -= Int(inLength)
        producedFrames += Int(outLength)
        return Int(outLength)
    }

    private static func tailFrames(latency: Int, inputRate: Int, outputRate: Int) -> Int {
        // round(n·out/in) can ask for one output frame more than the last input frame's time covers.
        latency + (inputRate + outputRate - 1) / outputRate + 1
    }
}
