import AnnounceModel
import AnnounceOutput
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bends float mix sums that go past the knee smoothly towards full scale, so
/// converting to integers never wraps and loud sums do not hard-clip.
///
///     |x| ≤ knee:  y = x                                  (exact identity)
///     |x| > knee:  y = sign(x) · (knee + r · tanh((|x| − knee) / r)),  r = ceiling − knee
///
/// Value and slope (1) are continuous at the knee; the curve is monotonic and
/// tends to `ceiling` without reaching past it (clamped: in Float tanh rounds to 1).
/// The ceiling is 32767/32768, the largest value every integer format takes
/// without clipping (int16 → 32767; int32 → 2^31 − 65536). NaN becomes 0.
/// Memoryless and stateless: no allocation, no locks.
public struct SoftLimiter: Sendable, Equatable {
    public let knee: Float
    public let ceiling: Float
    private let range: Float

    /// About -1 dBFS.
    public static let defaultKnee: Float = Gain.decibels(-1)
    public static let defaultCeiling: Float = 32_767.0 / 32_768.0

    public init(knee: Float = SoftLimiter.defaultKnee, ceiling: Float = SoftLimiter.defaultCeiling) {
        precondition(knee > 0 && knee < ceiling && ceiling <= 1, "SoftLimiter needs 0 < knee < ceiling ≤ 1")
        self.knee = knee
        self.ceiling = ceiling
        range = ceiling - knee
    }

    @inline(__always)
    public func callAsFunction(_ x: Float) -> Float {
        let magnitude = abs(x)
        if magnitude <= knee { return x }
        // NaN fails `<=` too and ends here.
        return bend(x, magnitude)
    }

    /// Limits `count` samples in place.
    public func process(_ samples: UnsafeMutablePointer<Float>, count: Int) {
        for index in 0..<count { samples[index] = self(samples[index]) }
    }

    private func bend(_ x: Float, _ magnitude: Float) -> Float {
        if magnitude.isNaN { return 0 }
        let y = min(ceiling, knee + range * tanh((magnitude - knee) / range))
        return x < 0 ? -y : y
    }
}
