import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// Watches a source's frames as they are read, in order from its start (the whole-file
/// loudness measured while a long clip's first play goes on): `take` is told each read,
/// `passEnded` that the first pass is out to its end.
public protocol SourceTap: AnyObject {
    func take(_ frames: UnsafePointer<Float>, count: Int)
    func passEnded()
}

/// The loudness stage: any source brought to its target by one gain for the whole play (a live
/// stream's follows it slowly, `SlowGain`), its true peak then held under the ceiling by a
/// look-ahead limiter (`TruePeakLimiter`). It runs
/// where the source is read, on the play's decode thread, never on the real-time one. It gives
/// float frames, as many as the source, each where it was: lengths, seeks and resume points
/// stay the source's.
public final class LeveledSource: WrappingSource {
    private let inner: any Source
    /// The gain applied now, linear: fixed for a clip; a live stream's follows `slowGain`.
    private var gain: Float
    /// A live stream's: its loudness as it comes (`follow` takes each read and says the
    /// short-term loudness), and the gain that follows it.
    private var slowGain: SlowGain?
    private let follow: ((UnsafePointer<Float>, Int) -> Double?)?
    private let limiter: TruePeakLimiter
    public let format: SourceFormat
    public let readableFormats: Set<SampleFormat> = [.float32]
    private let channels: Int
    private let chunk: UnsafeMutablePointer<Float>
    private let limited: UnsafeMutablePointer<Float>
    private var fifo: FrameFIFO
    private var passEnded = false
    /// Told the frames from `tapFrom` on while the source is read from its start without a seek.
    private var tap: (any SourceTap)?
    private let tapFrom: Int64
    /// Source frames read since the source was at its start.
    private var position: Int64 = 0

    static let chunkFrames = 4096

    /// Where the limiter holds true peaks, dBTP: half a dB under the ceiling, for what
    /// resampling to the device's rate and other meters' interpolation may add.
    public static let defaultCeiling = Loudness.ceiling - 0.5

    /// `gain` in dB; `ceiling` in dBTP.
    public convenience init(
        _ source: any Source, gain: Double, ceiling: Double = defaultCeiling,
        tap: (any SourceTap)? = nil, tapFrom: Int64 = 0
    ) {
        self.init(
            source, gain: Float(pow(10, gain / 20)), ceiling: ceiling, slowGain: nil, follow: nil, tap: tap,
            tapFrom: tapFrom)
    }

    /// A live stream brought toward `target` LUFS by a gain that follows its short-term
    /// loudness (`follow`: takes each read's frames, says the loudness), never faster than
    /// `SlowGain.rate`, its peaks held as a clip's.
    public convenience init(
        _ source: any Source, following target: Double, follow: @escaping (UnsafePointer<Float>, Int) -> Double?
    ) {
        self.init(
            source, gain: 1, ceiling: Self.defaultCeiling, slowGain: SlowGain(target: target), follow: follow, tap: nil,
            tapFrom: 0)
    }

    private init(
        _ source: any Source, gain: Float, ceiling: Double, slowGain: SlowGain?,
        follow: ((UnsafePointer<Float>, Int) -> Double?)?,
        tap: (any SourceTap)?, tapFrom: Int64
    ) {
        inner = source
        self.gain = gain
        self.slowGain = slowGain
        self.follow = follow
        let input = source.format
        channels = input.channels
        format = input.asFloat32
        limiter = TruePeakLimiter(channels: channels, sampleRate: input.sampleRate, ceiling: ceiling)
        chunk = .allocate(capacity: Self.chunkFrames * channels)
        limited = .allocate(capacity: (Self.chunkFrames + limiter.latency) * channels)
        fifo = FrameFIFO(channels: channels)
        self.tap = tap
        self.tapFrom = tapFrom
    }

    deinit {
        chunk.deallocate()
        limited.deallocate()
    }

    /// The lowest gain the limiter applied so far, in dB (0: it never acted).
    public var deepestLimiting: Double { 20 * log10(Double(limiter.deepestGain)) }

    public var wrapped: any Source { inner }
    public func sourceFrames(forRead frames: Int64) -> Int64 { inner.sourceFrames(forRead: frames) }

    /// `frames` (interleaved) as a play at `gain` dB gives them, limited, told to `tap`: what the
    /// limiter takes off a clip's loudness is measured before it plays, and made up for.
    public static func rehearse(
        _ frames: UnsafeBufferPointer<Float>, format: SourceFormat, gain: Double,
        ceiling: Double = defaultCeiling, into tap: any SourceTap
    ) {
        let channels = format.channels
        let limiter = TruePeakLimiter(channels: channels, sampleRate: format.sampleRate, ceiling: ceiling)
        let linear = Float(pow(10, gain / 20))
        let chunk = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames * channels)
        let limited = UnsafeMutablePointer<Float>.allocate(capacity: (chunkFrames + limiter.latency) * channels)
        defer {
            chunk.deallocate()
            limited.deallocate()
        }
        let total = frames.count / channels
        var offset = 0
        while offset < total {
            let count = min(chunkFrames, total - offset)
            for index in 0..<count * channels { chunk[index] = frames[offset * channels + index] * linear }
            tap.take(limited, count: limiter.process(chunk, count: count, into: limited))
            offset += count
        }
        tap.take(limited, count: limiter.flush(into: limited))
        tap.passEnded()
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int
    {
        precondition(format == .float32, "a leveled source reads as float only")
        let output = buffer.assumingMemoryBound(to: Float.self)
        while fifo.frames < frames, !passEnded { try pull(frames - fifo.frames + limiter.latency) }
        return fifo.read(into: output, frames: frames)
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        try inner.seek(toFrame: frame)
        limiter.reset()
        fifo.removeAll()
        passEnded = false
        // The tap follows one unbroken read from the start; another seek ends it.
        if frame != 0 || position > tapFrom { tap = nil }
        position = frame
    }

    /// One read of up to `wanted` frames of the source, gained and limited, into the fifo.
    private func pull(_ wanted: Int) throws(AnnounceError) {
        let got = try inner.read(into: chunk, frames: min(Self.chunkFrames, wanted), as: .float32)
        guard got > 0 else {
            fifo.append(limited, count: limiter.flush(into: limited))
            passEnded = true
            if position >= tapFrom { tap?.passEnded() }
            tap = nil
            return
        }
        if let tap, position + Int64(got) > tapFrom {
            let skip = Int(max(0, tapFrom - position))
            tap.take(chunk + skip * channels, count: got - skip)
        }
        position += Int64(got)
        if var slow = slowGain, let follow {
            // A ramp across the read, from the gain before it to the one its loudness asks for.
            let from = gain
            gain = Float(
                pow(10, slow.follow(shortTerm: follow(chunk, got), over: Double(got) / Double(format.sampleRate)) / 20))
            slowGain = slow
            let step = (gain - from) / Float(got)
            for frame in 0..<got {
                let frameGain = from + step * Float(frame + 1)
                for channel in 0..<channels { chunk[frame * channels + channel] *= frameGain }
            }
        } else {
            for index in 0..<got * channels { chunk[index] *= gain }
        }
        fifo.append(limited, count: limiter.process(chunk, count: got, into: limited))
    }
}
