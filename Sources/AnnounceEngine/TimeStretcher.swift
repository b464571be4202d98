import AnnounceModel
import CSonic

#if canImport(Glibc)
    import Glibc
#endif

/// Tempo and pitch for `ReshapedSource`: libsonic stretches the time by rate / pitch factor,
/// then speexdsp resamples the stretch from rate · factor back to the rate, which restores the
/// length and moves the pitch. libsonic's own pitch step is not used: 0.2.0 (Debian's)
/// resamples only mono right, and put stereo an octave off (fixed upstream in 7b44193,
/// unreleased). Below 44.1 kHz libsonic works on the audio resampled up: it splices whole
/// frames, and at 8 kHz that slipped tempo and pitch by 1%; at 48 kHz by 0.1%.
final class TimeStretcher {
    private let channels: Int
    private let sonic: sonicStream
    /// Source rate to `workRate` (nil when the source's rate is already high enough).
    private let upsample: Resampler?
    /// libsonic's output at `workRate` · pitch factor to the source's rate (nil when neither
    /// the pitch nor the rate libsonic works at changes).
    private let downsample: Resampler?
    /// libsonic's speed: kept frames in per stretched frame out.
    private let speed: Double
    /// Source frames that are `workRate`'s one.
    private let workFactor: Double
    /// Floats in transit: the upsampled input, libsonic's output, and the resampled output.
    private let upsampled: UnsafeMutablePointer<Float>
    private let upsampledCapacity: Int
    private let stretched: UnsafeMutablePointer<Float>
    private let resampled: UnsafeMutablePointer<Float>
    private let resampledCapacity: Int
    /// Output ready to be read, when `downsample` makes it.
    private var ready: FrameFIFO
    private let sourceRate: Int
    /// The source's name, for errors.
    private let name: String

    /// The lowest rate libsonic works at: below it the source is resampled up.
    static let lowestWorkRate = 44_100
    /// Frames moved per step.
    static let stepFrames = 4096
    /// Input libsonic holds unprocessed, on average: it works while two of its longest pitch
    /// periods (1/65 s) are left, so between one and two of them stay (measured:
    /// `ReshapedSourceTests.aPositionOutMapsToTheSameSoundIn`).
    static let heldPeriods = 1.5

    init(channels: Int, sampleRate: Int, rate: Double, semitones: Double, name: String) throws(AnnounceError) {
        self.channels = channels
        self.name = name
        ready = FrameFIFO(channels: channels)
        sourceRate = sampleRate
        let factor = pow(2, semitones / 12)
        let multiple = (Self.lowestWorkRate + sampleRate - 1) / sampleRate
        let workRate = sampleRate * multiple
        workFactor = Double(multiple)
        speed = rate / factor
        guard let sonic = sonicCreateStream(Int32(workRate), Int32(channels)) else {
            throw .internal("libsonic could not allocate a stream for \(name)")
        }
        self.sonic = sonic
        sonicSetSpeed(sonic, Float(speed))
        do {
            upsample =
                multiple > 1 ? try Resampler(channels: channels, inputRate: sampleRate, outputRate: workRate) : nil
            let stretchedRate = Int((Double(workRate) * factor).rounded())
            downsample =
                stretchedRate != sampleRate
                ? try Resampler(channels: channels, inputRate: stretchedRate, outputRate: sampleRate) : nil
        } catch {
            sonicDestroyStream(sonic)
            throw error
        }
        upsampledCapacity = upsample?.outputCapacity(forInputFrames: Self.stepFrames) ?? 0
        upsampled = .allocate(capacity: max(1, upsampledCapacity * channels))
        stretched = .allocate(capacity: Self.stepFrames * channels)
        resampledCapacity = downsample?.outputCapacity(forInputFrames: Self.stepFrames) ?? 0
        resampled = .allocate(capacity: max(1, resampledCapacity * channels))
    }

    deinit {
        sonicDestroyStream(sonic)
        upsampled.deallocate()
        stretched.deallocate()
        resampled.deallocate()
    }

    /// Source frames taken in that have not come out yet: libsonic's held periods and each
    /// resampler's look-ahead, in source frames.
    var heldSourceFrames: Int64 {
        let inSonic = Double(sourceRate) / 65 * Self.heldPeriods
        let afterSonic = Double(downsample?.latencyFrames ?? 0) * speed / workFactor
        return Int64((Double(upsample?.latencyFrames ?? 0) + inSonic + afterSonic).rounded())
    }

    /// Output frames ready to read.
    var readyFrames: Int {
        downsample == nil ? Int(sonicSamplesAvailable(sonic)) : ready.frames
    }

    /// Takes `count` source frames.
    func write(_ frames: UnsafePointer<Float>, _ count: Int) throws(AnnounceError) {
        guard let upsample else { return try stretch(frames, count) }
        var consumed = 0
        while consumed < count {
            let (taken, made) = upsample.process(
                frames + consumed * channels, frames: count - consumed,
                into: upsampled, capacity: upsampledCapacity)
            try stretch(upsampled, made)
            consumed += taken
        }
    }

    /// The source ended: everything still held comes out.
    func finish() throws(AnnounceError) {
        if let upsample {
            while case let made = upsample.finish(into: upsampled, capacity: upsampledCapacity), made > 0 {
                try stretch(upsampled, made)
            }
        }
        guard sonicFlushStream(sonic) != 0 else { throw .internal("libsonic ran out of memory flushing \(name)") }
        resample(finishing: true)
    }

    /// Up to `frames` ready frames into `output`; 0 when none are ready.
    func read(into output: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard downsample != nil else { return Int(sonicReadFloatFromStream(sonic, output, Int32(frames))) }
        return ready.read(into: output, frames: frames)
    }

    private func stretch(_ frames: UnsafePointer<Float>, _ count: Int) throws(AnnounceError) {
        guard count > 0 else { return }
        guard sonicWriteFloatToStream(sonic, UnsafeMutablePointer(mutating: frames), Int32(count)) != 0 else {
            throw .internal("libsonic ran out of memory reading \(name)")
        }
        resample(finishing: false)
    }

    /// Moves libsonic's output through `downsample` into `ready`; at the end, its tail too.
    private func resample(finishing: Bool) {
        guard let downsample else { return }
        while case let count = Int(sonicReadFloatFromStream(sonic, stretched, Int32(Self.stepFrames))), count > 0 {
            var consumed = 0
            while consumed < count {
                let (taken, made) = downsample.process(
                    stretched + consumed * channels, frames: count - consumed,
                    into: resampled, capacity: resampledCapacity)
                ready.append(resampled, count: made)
                consumed += taken
            }
        }
        guard finishing else { return }
        while case let made = downsample.finish(into: resampled, capacity: resampledCapacity), made > 0 {
            ready.append(resampled, count: made)
        }
    }
}
