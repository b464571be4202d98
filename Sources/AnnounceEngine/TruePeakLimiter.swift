#if canImport(Glibc)
    import Glibc
#endif

/// Holds a signal's true peak at or below a ceiling without touching what stays under it: a
/// look-ahead limiter for the loudness stage (`LeveledSource`), on the decode thread. Peaks are
/// found between samples too, 4× oversampled as BS.1770 measures true peak. Each frame's gain is
/// the lowest any channel needs over the look-ahead (held), released exponentially, then
/// smoothed by a moving average as long as the look-ahead: the average of values each at most
/// the gain a peak needs reaches that peak in time, so the ceiling holds exactly.
/// Frames come out in order and all of them, `latency` frames behind what went in. Its buffers
/// are made up front; a frame far from any peak only passes through the delay.
final class TruePeakLimiter {
    let channels: Int
    /// Frames between a frame going in and coming out: the look-ahead and the interpolator's half.
    let latency: Int
    private let ceiling: Float
    private let lookAhead: Int
    private let hold: Int
    private let release: Float
    /// Oversampling filter: 4 phases of a windowed sinc, phase 0 the sample itself.
    private static let phases = 4
    private static let tapsPerPhase = 13
    private static let filter: [Float] = {
        let count = phases * (tapsPerPhase - 1) + 1
        let center = Double(count - 1) / 2
        return (0..<count).map { index in
            let x = (Double(index) - center) / Double(phases)
            let sinc = x == 0 ? 1 : sin(.pi * x) / (.pi * x)
            let window = 0.5 + 0.5 * cos(.pi * (Double(index) - center) / (center + 1))  // Hann
            return Float(sinc * window)
        }
    }()
    /// The interpolator's delay in frames: the sample phase 0 reproduces.
    private static let interpolatorDelay = tapsPerPhase / 2
    /// Under this, samples cannot make a peak over the ceiling between them: the ceiling over
    /// the largest sum of a phase's taps' magnitudes.
    private let quietBound: Float

    private let taps: UnsafeMutablePointer<Float>
    /// Each channel's last `tapsPerPhase` input frames, for the interpolator (a ring).
    private let history: UnsafeMutablePointer<Float>
    private var historyAt = 0
    /// Input frames waiting to come out, `latency` deep (a ring).
    private let delay: UnsafeMutablePointer<Float>
    private var delayAt = 0
    /// The monotonic queue of the held window's minimum need: a ring of (frame, gain).
    private let queueFrames: UnsafeMutablePointer<Int>
    private let queueGains: UnsafeMutablePointer<Float>
    private var queueHead = 0
    private var queueCount = 0
    /// Released gains of the smoothing window (a ring) and their sum.
    private let released: UnsafeMutablePointer<Float>
    private var releasedSum = 0.0
    private var lastReleased: Float = 1
    /// The last frame whose need was under 1: once it is out of the held window and the gain
    /// has been released to 1, frames only pass through.
    private var lastNeed = Int.min / 2
    /// The last frame with a sample at or over `quietBound`: the interpolator runs only while
    /// one is within its reach (most of most clips are far under the ceiling).
    private var lastLoud = Int.min / 2
    /// Frames taken since the start or the last reset.
    private var taken = 0
    /// The lowest gain applied since the start: what the limiter did, for tests and the log.
    private(set) var deepestGain: Float = 1

    /// `ceiling` in dBTP; `lookAhead` and `release` in seconds.
    init(channels: Int, sampleRate: Int, ceiling: Double, lookAhead: Double = 0.005, release: Double = 0.08) {
        self.channels = channels
        self.ceiling = Float(pow(10, ceiling / 20))
        self.lookAhead = max(1, Int((lookAhead * Double(sampleRate)).rounded()))
        // Three frames more than the average: a peak between two samples is counted at the
        // first, and the one before a frame counts for it too.
        hold = self.lookAhead + 3
        self.release = Float(1 - exp(-1 / (release * Double(sampleRate))))
        latency = self.lookAhead + 1 + Self.interpolatorDelay
        let reach = (0..<Self.phases).map { phase in
            stride(from: phase, to: Self.filter.count, by: Self.phases).reduce(Float(0)) { $0 + abs(Self.filter[$1]) }
        }
        quietBound = self.ceiling / (reach.max() ?? 1)
        taps = .allocate(capacity: Self.filter.count)
        taps.initialize(from: Self.filter, count: Self.filter.count)
        history = .allocate(capacity: Self.tapsPerPhase * channels)
        delay = .allocate(capacity: latency * channels)
        queueFrames = .allocate(capacity: hold + 1)
        queueGains = .allocate(capacity: hold + 1)
        released = .allocate(capacity: self.lookAhead)
        reset()
    }

    deinit {
        for buffer in [taps, history, delay, queueGains, released] { buffer.deallocate() }
        queueFrames.deallocate()
    }

    /// Starts afresh (a seek): nothing held, nothing waiting.
    func reset() {
        history.update(repeating: 0, count: Self.tapsPerPhase * channels)
        delay.update(repeating: 0, count: latency * channels)
        released.update(repeating: 1, count: lookAhead)
        releasedSum = Double(lookAhead)
        lastReleased = 1
        queueHead = 0
        queueCount = 0
        lastNeed = Int.min / 2
        lastLoud = Int.min / 2
        historyAt = 0
        delayAt = 0
        taken = 0
    }

    /// Takes `count` frames; writes the limited frames now due to `output` (up to `count`: fewer
    /// while the look-ahead fills) and returns how many.
    func process(_ input: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>) -> Int {
        var written = 0
        for frame in 0..<count where step(input + frame * channels, output: output + written * channels) {
            written += 1
        }
        return written
    }

    /// The frames still waiting, at the end of the input: up to `latency`; how many.
    func flush(into output: UnsafeMutablePointer<Float>) -> Int {
        let waiting = min(taken, latency)
        let silence = [Float](repeating: 0, count: channels)
        var written = 0
        silence.withUnsafeBufferPointer { silence in
            for _ in 0..<latency
            where written < waiting && step(silence.baseAddress!, output: output + written * channels) {
                written += 1
            }
        }
        reset()
        return written
    }

    /// The largest magnitude of every channel's 4× oversampled signal around the frame
    /// `interpolatorDelay` back, from the history (its newest frame at `historyAt`).
    private func interpolatedPeak() -> Float {
        let count = Self.filter.count
        let depth = Self.tapsPerPhase
        var peak: Float = 0
        for channel in 0..<channels {
            for phase in 0..<Self.phases {
                var sum: Float = 0
                var tap = phase
                var at = historyAt
                while tap < count {
                    sum += taps[tap] * history[at * channels + channel]
                    tap += Self.phases
                    at = at == 0 ? depth - 1 : at - 1
                }
                peak = max(peak, abs(sum))
            }
        }
        return peak
    }

    /// One frame in; true when one came out into `output`.
    private func step(_ frame: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) -> Bool {
        let index = taken
        for channel in 0..<channels {
            history[historyAt * channels + channel] = frame[channel]
            if abs(frame[channel]) >= quietBound { lastLoud = index }
        }
        // The peak around the frame `interpolatorDelay` back, and the gain it needs.
        let peak = index - lastLoud < Self.tapsPerPhase ? interpolatedPeak() : 0
        historyAt = historyAt + 1 == Self.tapsPerPhase ? 0 : historyAt + 1
        let need = peak > ceiling ? ceiling / peak : 1
        if need < 1 { lastNeed = index }

        var gain: Float = 1
        if index - lastNeed < hold || lastReleased < 1 || releasedSum < Double(lookAhead) - 1e-3 {
            // The lowest need over the held window (a monotonic queue), released, then averaged.
            while queueCount > 0, queueGains[(queueHead + queueCount - 1) % (hold + 1)] >= need { queueCount -= 1 }
            queueFrames[(queueHead + queueCount) % (hold + 1)] = index
            queueGains[(queueHead + queueCount) % (hold + 1)] = need
            queueCount += 1
            while queueFrames[queueHead] <= index - hold {
                queueHead = (queueHead + 1) % (hold + 1)
                queueCount -= 1
            }
            let released = min(queueGains[queueHead], lastReleased + (1 - lastReleased) * release)
            lastReleased = released > 0.99999 ? 1 : released
            let slot = index % lookAhead
            releasedSum += Double(lastReleased) - Double(self.released[slot])
            self.released[slot] = lastReleased
            gain = min(Float(releasedSum / Double(lookAhead)), 1)
            deepestGain = min(deepestGain, gain)
        } else if queueCount > 0 {
            // Back to rest: every held and released gain is 1.
            queueCount = 0
            released.update(repeating: 1, count: lookAhead)
            releasedSum = Double(lookAhead)
        }

        // The frame `latency` back leaves with the gain; this one waits in its place.
        let slot = delayAt * channels
        for channel in 0..<channels {
            output[channel] = delay[slot + channel] * gain
            delay[slot + channel] = frame[channel]
        }
        delayAt = delayAt + 1 == latency ? 0 : delayAt + 1
        taken += 1
        return index >= latency
    }
}
