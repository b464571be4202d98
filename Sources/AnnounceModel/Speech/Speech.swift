/// `announce say`: what to speak and how (docs/protocol.md, Clip.speech). The spool keeps this,
/// never audio: after a restart the text is rendered again (or found in the render cache).
public struct Speech: Codable, Equatable, Sendable {
    /// Plain text, or SSML when `ssml`.
    public var text: String
    public var engine: SpeechEngine
    /// The engine's voice name (`announce voices`); nil: the engine's voice for `language`, else its default.
    public var voice: String?
    /// Words per minute; nil: the engine's default.
    public var speed: Int?
    /// A language tag (en, en-us, de); nil: the voice's.
    public var language: String?
    /// `text` is SSML (espeak-ng only).
    public var ssml: Bool?

    public init(
        text: String, engine: SpeechEngine = .default, voice: String? = nil, speed: Int? = nil,
        language: String? = nil, ssml: Bool? = nil
    ) {
        self.text = text
        self.engine = engine
        self.voice = voice
        self.speed = speed
        self.language = language
        self.ssml = ssml
    }

    private enum CodingKeys: String, CodingKey {
        case text, engine, voice, speed, language = "lang", ssml
    }

    /// The units an interrupted utterance resumes at and the drop-after rule counts: its
    /// sentences, or the whole document when it is SSML (its markup spans them).
    public var sentences: [String] {
        ssml == true ? [text] : Sentences.split(text)
    }

    /// What status, events and `announce queue` call it: `say: "backup finished…"`.
    public var label: String {
        // Control characters (a terminal's escapes) are spaces here: status and queue print it.
        let printable = String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        let words = printable.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let shown = words.count > Self.labelCharacters ? words.prefix(Self.labelCharacters - 1) + "…" : Substring(words)
        return "say: \"\(shown)\""
    }

    static let labelCharacters = 48

    /// Why the daemon refuses it, or nil (one line naming the field, as `ItemProblem`).
    public var problem: String? {
        if text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) { return "speech.text is empty" }
        if text.utf8.count > Limits.maxSpeechBytes {
            return "speech.text is longer than \(Limits.maxSpeechBytes) bytes"
        }
        if text.utf8.contains(0) { return "speech.text contains a NUL byte" }
        if let speed, !Limits.speechSpeed.contains(speed) {
            return
                "speech.speed must be \(Limits.speechSpeed.lowerBound) to \(Limits.speechSpeed.upperBound) words per minute, not \(speed)"
        }
        for (field, value) in [("voice", voice), ("lang", language)] {
            if let value, let problem = Self.nameProblem(value) { return "speech.\(field) \(problem)" }
        }
        if engine == .flite, let language, !language.lowercased().hasPrefix("en") {
            return "speech.lang: flite's voices speak US English only, not \(language)"
        }
        if ssml == true && !engine.readsSSML {
            return "speech.ssml: \(engine.rawValue) does not read SSML (espeak-ng does)"
        }
        // espeak-ng plays an <audio src> file itself, with the daemon's rights: the system
        // queue's user, or this host for a play from another one. A file is `play`'s to open.
        if ssml == true, text.contains(/<\s*audio\b/.ignoresCase()) {
            return "speech.text: SSML <audio> is not spoken; play the file with announce play"
        }
        return nil
    }

    /// Voices and language tags are names, never options or text: printable, no spaces, not
    /// starting with `-` (each goes to the engine as one argument).
    static func nameProblem(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > 256 { return "must be 1 to 256 bytes" }
        if name.hasPrefix("-") { return "must not start with '-'" }
        if name.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) {
            return "must not contain spaces or control characters"
        }
        return nil
    }
}
