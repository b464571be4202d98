import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

private let engineNames = SpeechEngine.allCases.map(\.rawValue)

/// The speech engine and voice, for `say` (and the engine for `voices`).
struct VoiceFlags: ParsableArguments {
    @Option(
        long: "engine",
        help: "Speech engine: espeak-ng (the default), piper or flite (default: the config file's [speech] engine).",
        completion: .list(engineNames))
    var engine: SpeechEngine?

    @Option(
        long: "voice",
        help:
            "The engine's voice (see `announce voices`): espeak-ng's language or voice, flite's voice or .flitevox file, piper's model name or .onnx path; default: the config file's [speech] voice, else the engine's."
    )
    var voice: String?

    @Option(
        signed: "speed",
        help: "Words per minute, \(Limits.speechSpeed.lowerBound) to \(Limits.speechSpeed.upperBound).",
        valueName: "wpm")
    var speed: Int?

    @Option(
        long: "lang",
        help: "Language (en, en-us, de, ...) when no --voice is given: the engine picks its voice for it.",
        valueName: "tag")
    var language: String?

    @Flag(
        long: "ssml",
        help: "The text is SSML (espeak-ng only). It is spoken as one piece: an interruption resumes it from its start."
    )
    var ssml = false

    /// The speech of `text`: the options, then the config file's [speech] section (its voice
    /// for its engine, when no --lang is given), then the defaults.
    func speech(_ text: String, configuration: UserConfiguration) -> Speech {
        let engine = engine ?? configuration.speechEngine ?? .default
        // The config file's voice is its engine's, and --lang asks for the language's voice.
        let configured =
            language == nil && engine == (configuration.speechEngine ?? .default) ? configuration.speechVoice : nil
        return Speech(
            text: text, engine: engine, voice: (voice ?? configured).map { Self.absolute($0, engine: engine) },
            speed: speed, language: language, ssml: ssml ? true : nil)
    }

    /// A piper or flite voice given as a relative path (a model or .flitevox file) made
    /// absolute: the daemon runs in another directory. (espeak-ng's `gmw/en-US` is its own name.)
    static func absolute(_ voice: String, engine: SpeechEngine) -> String {
        guard engine != .espeakNG, voice.contains("/"), !voice.hasPrefix("/"), !voice.contains("://"),
            let cwd = getcwd(nil, 0)
        else { return voice }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + voice
    }
}

extension SpeechEngine: ExpressibleByArgument {}

struct Say: QueuingCommand {
    static let configuration = CommandConfiguration.subcommand(
        "say",
        abstract: "Speak text through the queue, and wait until it has been heard.",
        discussion: """
            The text is rendered by a speech engine run as a program (espeak-ng by default; piper and \
            flite when installed), a sentence at a time, and streamed: the first words play while the \
            rest is rendered. Every option of `play` applies. The queue keeps the text, not audio: an \
            utterance interrupted by a higher priority, or by a restart of the daemon, resumes at the \
            start of the sentence it was in, and --drop-after counts whole sentences heard. Renders are \
            cached in $XDG_CACHE_HOME/announce/speech (~/.cache/...), so a repeated announcement \
            costs no render.

            Exit status as for play; also 64 for empty text, 65 for text that is not UTF-8 (naming \
            the byte), 69 when the engine is not installed (naming the package), 70 when it fails.

            EXAMPLES
              announce say "Backup finished on nas."
              announce say --priority high --voice en-us+f3 "Build 4512 failed."
              journalctl -n1 -o cat | announce say -   # the text on stdin
              announce say --rate 1.5 --tag weather --replace -- "-5 degrees tonight."
            """)

    @Argument(
        help: ArgumentHelp(
            "The words to say (joined with spaces), or - to read the text from stdin. Text starting with - goes after --.",
            valueName: "text"))
    var words: [String]

    @OptionGroup var voice: VoiceFlags
    @OptionGroup var output: DeviceFlags
    @OptionGroup var playback: PlaybackFlags
    @OptionGroup var chimes: ChimeFlags
    @OptionGroup var session: SessionFlags
    @OptionGroup var queue: QueueFlags
    @OptionGroup var delivery: DeliveryFlags
    @OptionGroup var zones: ZoneFlags

    func validate() throws {
        if words.isEmpty { throw ValidationError("Missing the text to say (or - for stdin).") }
        if let speed = voice.speed, !Limits.speechSpeed.contains(speed) {
            throw ValidationError(
                "--speed \(speed): out of range \(Limits.speechSpeed.lowerBound)…\(Limits.speechSpeed.upperBound) words per minute"
            )
        }
        try checkItemOptions()
    }

    func run() throws {
        let text: String
        do {
            text = try words == ["-"] ? Self.readStandardInput() : Self.argumentText(words)
        } catch {
            throw reportedExit(error)
        }
        let speech = voice.speech(text, configuration: UserConfiguration.load().configuration)
        try submit(names: [speech.label], paths: [speech.label], command: self) {
            (_: FileHandover?) throws(AnnounceError) in
            if let problem = speech.problem { throw .usage(optionText(problem)) }
            // The engine runs in the daemon, which looks on the same PATH (and the usual bin
            // directories); with --zone or --host, on each host, which renders it itself.
            if !zones.isOn {
                guard let program = ChildProcess.find(speech.engine.program) else {
                    throw speech.engine.notInstalled
                }
                try EngineVoices.check(speech, program: program)
            }
            if playback.start != nil && speech.ssml == true { throw .usage("--start cannot go into SSML") }
            return [try itemRequest(for: itemClip(speech.label, speech: speech))]
        }
    }

    /// A speech problem in the options' words: `speech.voice must …` → `--voice must …`.
    private func optionText(_ problem: String) -> String {
        if problem.hasPrefix("speech.text is empty") { return "nothing to say: the text is empty" }
        return problem.replacing("speech.text", with: "the text").replacing("speech.speed", with: "--speed")
            .replacing("speech.voice", with: "--voice").replacing("speech.lang", with: "--lang").replacing(
                "speech.ssml", with: "--ssml")
    }

    /// The words as typed: their bytes, so that a byte that is not UTF-8 is named (65), not replaced.
    static func argumentText(_ words: [String]) throws(AnnounceError) -> String {
        try utf8Text(Array(RawArguments.bytes(of: words).joined(separator: [0x20])), named: "text")
    }

    static func readStandardInput() throws(AnnounceError) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw .cannotOpen(path: "stdin", reason: systemErrorMessage(errno)) }
            if got == 0 { break }
            bytes += chunk[0..<got]
            if bytes.count > Limits.maxSpeechBytes {
                throw .usage("stdin: the text is longer than \(Limits.maxSpeechBytes) bytes")
            }
        }
        return try utf8Text(bytes, named: "stdin")
    }

    /// `bytes` as text, or 65 naming the first byte that is not UTF-8 (or is NUL, which no engine reads).
    static func utf8Text(_ bytes: [UInt8], named name: String) throws(AnnounceError) -> String {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1 && encoded.first == 0 {
                    throw .undecodable(path: name, reason: "a NUL byte at byte offset \(offset)")
                }
                offset += encoded.count
            case .emptyInput: return String(decoding: bytes, as: UTF8.self)
            case .error: throw .undecodable(path: name, reason: "not UTF-8 at byte offset \(offset)")
            }
        }
    }
}
