/// How a clip is reshaped on its way to the device (`--rate`, `--pitch`, `--skip-silence`):
/// what the engine's reshaping source is asked to do. Positions stay in source time.
public struct Reshaping: Equatable, Sendable {
    /// Tempo, pitch kept: 2 plays twice as fast.
    public var rate: Double
    /// Pitch shift in semitones, length kept.
    public var semitones: Double
    /// Silence skipped by this rule; nil plays every pause as it is.
    public var silence: SilenceRule?

    public init(rate: Double = 1, semitones: Double = 0, silence: SilenceRule? = nil) {
        self.rate = rate
        self.semitones = semitones
        self.silence = silence
    }

    /// A clip's fields, absent ones off; `silence` is the daemon's rule for `skipSilence`.
    public init(_ clip: Clip, silence: SilenceRule) {
        self.init(rate: clip.rate ?? 1, semitones: clip.pitch ?? 0, silence: clip.skipSilence == true ? silence : nil)
    }

    /// Nothing to do: the source plays as it is, sample for sample.
    public var isIdentity: Bool { rate == 1 && semitones == 0 && silence == nil }

    /// Whether tempo or pitch change (libsonic's part; silence skipping alone needs none of it).
    public var changesTempoOrPitch: Bool { rate != 1 || semitones != 0 }
}

/// What `--skip-silence` counts as silence and how long a pause it leaves: the config file's
/// `silence-gap` and `silence-level`.
public struct SilenceRule: Equatable, Sendable {
    /// A pause longer than this, in seconds, is cut to this (its last part kept, so the sound
    /// after it still starts from its own quiet lead-in); shorter ones are left alone. Leading
    /// and trailing silence goes entirely.
    public var gap: Double
    /// A frame is silent when every channel is below this level, in dBFS.
    public var level: Double

    public static let defaultGap = 0.3
    public static let defaultLevel = -50.0
    public static let `default` = SilenceRule(gap: defaultGap, level: defaultLevel)

    public init(gap: Double = SilenceRule.defaultGap, level: Double = SilenceRule.defaultLevel) {
        self.gap = gap
        self.level = level
    }
}
