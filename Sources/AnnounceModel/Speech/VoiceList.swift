/// One voice as `announce voices` lists it (docs/json.md, voice).
public struct VoiceEntry: Encodable, Equatable, Sendable {
    public var engine: SpeechEngine
    /// What `--voice` takes.
    public var name: String
    /// Its language tag, when known.
    public var language: String?
    /// `male` or `female`, when known.
    public var gender: String?
    /// The engine's own words for it (espeak-ng's voice name, a piper model's dataset).
    public var description: String?

    private enum CodingKeys: String, CodingKey {
        case engine, name, language = "lang", gender, description
    }
}

/// Reads the engines' own voice listings.
public enum VoiceList {
    /// `espeak-ng --voices`: a header line, then `Pty Language Age/Gender VoiceName File Other…`,
    /// e.g. ` 2  en-us  --/M  English_(America)  gmw/en-US  (en 3)`. The language is what -v
    /// takes; one entry per language (the first, as espeak-ng picks it).
    public static func espeakNG(_ listing: String) -> [VoiceEntry] {
        var seen = Set<String>()
        var voices: [VoiceEntry] = []
        for line in listing.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 5, Int(fields[0]) != nil, seen.insert(String(fields[1])).inserted else { continue }
            let gender: String? =
                switch fields[2].split(separator: "/").last {
                case "M": "male"
                case "F": "female"
                default: nil
                }
            voices.append(
                VoiceEntry(
                    engine: .espeakNG, name: String(fields[1]), language: String(fields[1]), gender: gender,
                    description: String(fields[3]).replacing("_", with: " ")))
        }
        return voices
    }

    /// `flite -lv`: `Voices available: kal awb_time kal16 awb rms slt `. Its voices are CMU's
    /// US English ones; of those, slt is a woman's voice and the rest men's.
    public static func flite(_ listing: String) -> [VoiceEntry] {
        guard let colon = listing.firstIndex(of: ":") else { return [] }
        return listing[listing.index(after: colon)...].split(whereSeparator: \.isWhitespace).map { name in
            VoiceEntry(engine: .flite, name: String(name), language: "en-us", gender: fliteGenders[String(name)])
        }
    }

    static let fliteGenders = [
        "slt": "female", "kal": "male", "kal16": "male", "awb": "male", "awb_time": "male", "rms": "male"
    ]

    /// A piper voice model as listed.
    public static func piper(_ model: VoiceModel) -> VoiceEntry {
        VoiceEntry(engine: .piper, name: model.name, language: model.language, description: model.description)
    }
}
