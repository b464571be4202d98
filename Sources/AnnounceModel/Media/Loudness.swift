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

extension Loudness {
    /// The highest true peak a normalised play may reach, dBTP (EBU R128's streaming ceiling).
    public static let ceiling = -1.0
    /// Below this a clip is silence or near it, LUFS: never amplified.
    public static let silenceFloor = -70.0
    /// How much of a clip its first play is measured by, seconds: a longer clip starts with the
    /// gain of its start, and is measured whole as it plays (`LoudnessCache`).
    public static let openingSeconds = 30.0
    /// How long the opening of a clip that arrives while it is read (a download) is waited for,
    /// seconds: a slow server delays its start by no more, and it is measured by what came.
    public static let arrivingOpeningWait = 0.3

    /// The one figure a clip is brought to its target by: its integrated loudness, or for a
    /// clip shorter than one gating block (400 ms) its loudest momentary loudness.
    public var level: Double? { integrated ?? momentaryMax }

    /// The gain in dB that brings it to `target` LUFS: 0 for silence and near-silence.
    public func gain(toward target: Double) -> Double {
        guard let level, level >= Self.silenceFloor else { return 0 }
        return target - level
    }
}

/// What a play's loudness is brought to (`--loudness`, the config file's `loudness`): a target
/// integrated loudness in LUFS, or `off`, the file's own level sample for sample. On the wire a
/// number or the string "off".
public enum LoudnessTarget: Codable, Equatable, Sendable, CustomStringConvertible {
    case off
    case lufs(Double)

    /// Every clip's level unless told otherwise: -16 LUFS, as streaming services and AES TD1008
    /// set speech and music on small devices.
    public static let standard = LoudnessTarget.lufs(-16)

    /// What a target must be, in a warning's or an option's words.
    public static let rule =
        "a loudness in LUFS from \(Int(Limits.loudness.lowerBound)) to \(Int(Limits.loudness.upperBound)), like -16, or off"

    /// "-16", "-16LUFS", "-16 LUFS" or "off"; nil for anything else, a target outside `Limits.loudness` too.
    public init?(parsing text: String) {
        let text = text.trimming(" \t").lowercased()
        if text == "off" {
            self = .off
            return
        }
        let number = text.hasSuffix("lufs") ? String(text.dropLast(4)).trimming(" \t") : text
        guard let lufs = Double(number), Limits.loudness.contains(lufs) else { return nil }
        self = .lufs(lufs)
    }

    /// The target in LUFS, nil for off.
    public var lufs: Double? {
        if case .lufs(let value) = self { return value }
        return nil
    }

    /// Within `Limits.loudness` (always for off).
    public var isValid: Bool { lufs.map { Limits.loudness.contains($0) } ?? true }

    public var description: String { NumberOrWord.text(lufs, unit: "LUFS", word: "off") }

    public init(from decoder: any Decoder) throws {
        self = try NumberOrWord.decode(from: decoder, word: "off").map(LoudnessTarget.lufs) ?? .off
    }

    public func encode(to encoder: any Encoder) throws { try NumberOrWord.encode(lufs, word: "off", to: encoder) }
}

/// A setting that is a number or one word (`-16` or `"off"`, `-15` or `"silent"`), as the wire,
/// messages and the config file give it.
enum NumberOrWord {
    /// The number, or nil for the word; anything else fails to decode.
    static func decode(from decoder: any Decoder, word: String) throws -> Double? {
        let container = try decoder.singleValueContainer()
        guard let text = try? container.decode(String.self) else { return try container.decode(Double.self) }
        guard text == word else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a number or \"\(word)\""))
        }
        return nil
    }

    static func encode(_ number: Double?, word: String, to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let number { try container.encode(number) } else { try container.encode(word) }
    }

    /// "-16 LUFS", "-14.5 LUFS", or the word.
    static func text(_ number: Double?, unit: String, word: String) -> String {
        guard let number else { return word }
        return number == number.rounded() ? "\(Int(number)) \(unit)" : "\(number) \(unit)"
    }
}

/// A live stream's gain (`--stream` at a loudness target): it follows the stream's short-term
/// (3 s) loudness toward the target, never faster than `rate` dB a second, so a level that
/// changes is met slowly and no word is pumped. It starts at 0 dB; silence and near-silence
/// leave it where it is.
public struct SlowGain: Equatable, Sendable {
    /// The fastest it moves, dB a second.
    public static let rate = 1.0
    public let target: Double
    /// The gain now, dB.
    public private(set) var decibels = 0.0

    public init(target: Double) { self.target = target }

    /// The gain after `seconds` more of the stream, whose short-term loudness is now `shortTerm`.
    public mutating func follow(shortTerm: Double?, over seconds: Double) -> Double {
        guard let shortTerm, shortTerm >= Loudness.silenceFloor else { return decibels }
        let step = Self.rate * seconds
        decibels += max(-step, min(step, target - shortTerm - decibels))
        return decibels
    }
}
