/// A clip's loudness as EBU R128 / ITU-R BS.1770 measures it (libebur128, as ffmpeg's
/// `ebur128` filter does with `peak=true`): what `announce info` shows, and what a loudness
/// stage would bring to a target. A value is nil where it cannot be measured: integrated
/// loudness needs one 400 ms block above the -70 LUFS gate, the range 3 s of such audio.
public struct Loudness: Codable, Equatable, Sendable {
    /// Integrated loudness, LUFS.
    public var integrated: Double?
    /// The highest true peak of any channel, dBTP (4× oversampled).
    public var truePeak: Double?
    /// Loudness range, LU.
    public var range: Double?
    /// The loudest momentary (400 ms) loudness, LUFS: what a clip shorter than one gating
    /// block is measured by.
    public var momentaryMax: Double?

    public init(integrated: Double? = nil, truePeak: Double? = nil, range: Double? = nil, momentaryMax: Double? = nil) {
        self.integrated = integrated
        self.truePeak = truePeak
        self.range = range
        self.momentaryMax = momentaryMax
    }

    /// A measured level, or nil for libebur128's -inf (nothing above the gate) and NaN.
    public static func finite(_ value: Double) -> Double? {
        value.isFinite ? value : nil
    }
}
