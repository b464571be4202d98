import Foundation
import Testing

/// One loudness for every clip (DESIGN §4, Loudness): by default every play lands at -16 LUFS
/// integrated with its true peak at or under -1 dBTP, measured on ALSA's file device by
/// ffmpeg's `ebur128` filter (`peak=true`), not by announce's own meter.
@Suite("Loudness normalisation, measured by ffmpeg's ebur128")
struct LoudnessTests {
    /// ffmpeg's integrated loudness and true peak of a capture.
    static func heard(_ capture: String) async throws -> (integrated: Double, truePeak: Double) {
        try await LoudnessInfoTests.ffmpegLoudness(capture)
    }

    /// ffmpeg's loudest momentary loudness of a capture padded with a second of silence (a clip
    /// shorter than 400 ms has no gating block: the window holding all of it is its measure).
    static func loudestMomentary(_ capture: String) async throws -> Double {
        let outcome = try await Runner.run(
            "ffmpeg",
            [
                "-nostdin", "-nostats", "-hide_banner", "-i", capture, "-af",
                "apad=pad_dur=1,ebur128", "-f", "null", "-"
            ])
        try #require(outcome.status == 0, "ffmpeg: \(outcome)")
        let values = outcome.stderr.split(separator: "\n").compactMap { line -> Double? in
            guard let range = line.range(of: "M:") else { return nil }
            return Double(line[range.upperBound...].split(separator: " ").first ?? "")
        }
        return try #require(values.max(), "no M: in \(outcome.stderr)")
    }

    /// A clip made by sox: `effects` after `-n -r RATE -c CHANNELS -b 16 FILE`.
    static func clip(_ name: String, rate: Int = 44_100, channels: Int = 2, _ effects: [String]) async throws -> String
    {
        let path = try Harness.capturePath(name) + ".wav"
        let sox = try await Runner.run("sox", ["-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", path] + effects)
        try #require(sox.status == 0, "\(sox)")
        return path
    }

    /// A config home with `text` as its config (nothing: every default).
    static func configHome(_ text: String = "") throws -> String {
        let home = try Harness.workResult.get().path + "/loudness-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
        try text.write(toFile: home + "/announce/config", atomically: true, encoding: .utf8)
        return home
    }

    /// A daemon with the defaults (or `config`) and its own loudness cache; `body` gets the runtime
    /// and the cache directory.
    static func withDefaults(
        config: String = "", device: String = "null",
        _ body: (DaemonRuntime, DaemonProcess, String) async throws -> Void
    ) async throws {
        let cache = try Harness.workResult.get().path + "/loudness-cache-\(UUID().uuidString.prefix(8))"
        try await withDaemonRuntime { runtime in
            let environment: [String: String?] = ["XDG_CONFIG_HOME": try configHome(config), "XDG_CACHE_HOME": cache]
            let daemon = try await runtime.startDaemon(device: device, environment: environment)
            try await body(runtime, daemon, cache)
        }
    }

    /// Plays `arguments` into a new capture; returns the capture.
    static func play(_ runtime: DaemonRuntime, _ arguments: [String], label: String) async throws -> String {
        let capture = try Harness.capturePath(label)
        let outcome = try await runtime.announce(arguments + ["-d", Harness.fileDevice(capture)])
        try #require(outcome.status == 0 && outcome.stderr.isEmpty, "\(arguments): \(outcome)")
        return capture
    }

    @Test(
        "clips 20 dB apart, speech, a pluck, MP3 and mono all land at -16 LUFS ±1 with true peak ≤ -1 dBTP; a 150 ms beep by its loudest moment"
    )
    func everyClipAtOneLoudness() async throws {
        let loud = try await Self.clip("pink-loud", ["synth", "4", "pinknoise", "vol", "0.8"])
        let quiet = try await Self.clip("pink-quiet", ["synth", "4", "pinknoise", "vol", "0.08"])
        // A plucked string: a sharp attack that the gain lifts into the limiter, then a decay.
        let peaky = try await Self.clip("pluck", rate: 48_000, ["synth", "3", "pluck", "C5", "vol", "0.05"])
        let clips = [
            loud, quiet, peaky, try Harness.fixture("speech.wav"), try Harness.fixture("cbr128.mp3"),
            try Harness.fixture("mono.mp3")
        ]
        try await Self.withDefaults { runtime, _, _ in
            for clip in clips {
                let heard = try await Self.heard(try await Self.play(runtime, ["play", clip], label: "normalised"))
                #expect(abs(heard.integrated + 16) <= 1, "\(clip): \(heard.integrated) LUFS")
                #expect(heard.truePeak <= -1, "\(clip): true peak \(heard.truePeak) dBTP")
            }
            let beep = try await Self.clip(
                "beep", rate: 48_000, channels: 1, ["synth", "0.15", "sine", "1000", "vol", "0.05"])
            let momentary = try await Self.loudestMomentary(try await Self.play(runtime, ["play", beep], label: "beep"))
            #expect(abs(momentary + 16) <= 1, "a 150 ms beep: \(momentary) LUFS momentary")
        }
    }

    @Test(
        "--loudness off plays the file sample for sample; --loudness -23 and the config's loudness = -20 set the level; --gain applies on top"
    )
    func targets() async throws {
        let tone = try await Self.clip("tone", ["synth", "3", "sine", "440", "vol", "0.05"])
        try await Self.withDefaults(config: "loudness = -20\n") { runtime, _, _ in
            let off = try await Self.play(runtime, ["play", tone, "--loudness", "off"], label: "off")
            let played = try await StreamTests.soxSamples(off)
            let file = try await StreamTests.soxSamples(tone)
            #expect(played == file, "--loudness off: the file's own samples")
            for (arguments, expected) in [
                ([String](), -20.0), (["--loudness", "-23"], -23), (["--loudness", "-23", "--gain", "-6"], -29)
            ] {
                let heard = try await Self.heard(
                    try await Self.play(runtime, ["play", tone] + arguments, label: "target"))
                #expect(
                    abs(heard.integrated - expected) <= 0.5, "\(arguments): \(heard.integrated) LUFS, not \(expected)")
            }
        }
    }

    @Test(
        "a file is measured once: the second play reads the cache, an edited file is measured again, a corrupt cache is rebuilt with a warning"
    )
    func measuredOnce() async throws {
        let clip = try await Self.clip("once", ["synth", "2", "pinknoise", "vol", "0.1"])
        try await Self.withDefaults { runtime, daemon, cache in
            _ = try await Self.play(runtime, ["play", clip], label: "first")
            _ = try await Self.play(runtime, ["play", clip, "--gain", "-3"], label: "second")
            #expect(
                daemon.log.components(separatedBy: "loudness of \(clip): ").count - 1 == 1,
                "measured once: \(daemon.log)")
            let entries = try String(contentsOfFile: cache + "/announce/loudness", encoding: .utf8).split(
                separator: "\n")
            #expect(entries.count == 1, "\(entries)")
            let sox = try await Runner.run("sox", [clip, clip + ".louder.wav", "vol", "2"])
            try #require(sox.status == 0)
            try FileManager.default.removeItem(atPath: clip)
            try FileManager.default.moveItem(atPath: clip + ".louder.wav", toPath: clip)
            let heard = try await Self.heard(try await Self.play(runtime, ["play", clip], label: "edited"))
            #expect(abs(heard.integrated + 16) <= 1, "\(heard.integrated)")
            #expect(
                daemon.log.components(separatedBy: "loudness of \(clip): ").count - 1 == 2, "edited: measured again")
        }
        // A cache that is not one: a warning in the log, and the play goes on at its level.
        let cache = try Harness.workResult.get().path + "/loudness-corrupt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: cache + "/announce", withIntermediateDirectories: true)
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(
            to: URL(fileURLWithPath: cache + "/announce/loudness"))
        try await withDaemonRuntime { runtime in
            let daemon = try await runtime.startDaemon(
                device: "null", environment: ["XDG_CONFIG_HOME": try Self.configHome(), "XDG_CACHE_HOME": cache])
            let heard = try await Self.heard(try await Self.play(runtime, ["play", clip], label: "corrupt-cache"))
            #expect(abs(heard.integrated + 16) <= 1, "\(heard.integrated)")
            #expect(daemon.log.contains("warning: loudness cache \(cache)/announce/loudness: "), "\(daemon.log)")
            let rebuilt = try String(contentsOfFile: cache + "/announce/loudness", encoding: .utf8).split(
                separator: "\n")
            #expect(rebuilt.count == 1 && rebuilt[0].split(separator: " ").count == 2, "\(rebuilt)")
        }
    }

    @Test("say, stdin and alert are normalised too; two say sentences match within 1 LU")
    func everyKindOfItem() async throws {
        let speech = try Harness.fixture("speech.wav")
        let alert = try await Self.clip("alert-quiet", rate: 48_000, ["synth", "0.8", "sine", "880", "vol", "0.03"])
        try await Self.withDefaults { runtime, _, _ in
            var levels: [Double] = []
            for sentence in [
                "The backup finished at three o'clock, without errors.",
                "Tomorrow night the next run copies everything again."
            ] {
                let heard = try await Self.heard(try await Self.play(runtime, ["say", sentence], label: "say"))
                #expect(abs(heard.integrated + 16) <= 1 && heard.truePeak <= -1, "\(sentence): \(heard)")
                levels.append(heard.integrated)
            }
            #expect(abs(levels[0] - levels[1]) <= 1, "\(levels)")
            let capture = try Harness.capturePath("stdin")
            let piped = try await runtime.announce(["play", "-", "-d", Harness.fileDevice(capture)], stdin: speech)
            try #require(piped.status == 0, "\(piped)")
            let fromStdin = try await Self.heard(capture)
            #expect(abs(fromStdin.integrated + 16) <= 1 && fromStdin.truePeak <= -1, "stdin: \(fromStdin)")
            let alerted = try await Self.heard(try await Self.play(runtime, ["alert", "--wait", alert], label: "alert"))
            #expect(abs(alerted.integrated + 16) <= 1, "alert: \(alerted)")
        }
    }

    @Test(
        "play URL while its server holds back all but the first 10 s: it starts at once, measured by what came, at -16 LUFS ±1"
    )
    func slowURL() async throws {
        let source = try await Self.clip(
            "url-pink", rate: 16_000, channels: 1, ["synth", "20", "pinknoise", "vol", "0.1"])
        let directory = try Harness.workResult.get().path + "/served-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: directory + "/pink.wav")
        let server = try HTTPTestServer(directory: directory, logging: true)
        let gate = directory + "/pink.wav.open"
        defer {
            FileManager.default.createFile(atPath: gate, contents: Data())
            server.stop()
        }
        try await Self.withDefaults { runtime, daemon, _ in
            let watcher = try await runtime.subscribe()
            let capture = try Harness.capturePath("url-slow")
            let play = Task {
                try await runtime.announce(
                    ["play", server.url("gate/pink.wav"), "-d", Harness.fileDevice(capture)],
                    environment: URLTests.direct)
            }
            // Its opening is what came within 0.3 s, not the 30 s a file's is.
            do {
                _ = try await offPool { try watcher.events(until: { $0.event == "started" }, timeout: 15) }
            } catch {
                throw HarnessError("\(error); \(server.requests()); \(daemon.log)")
            }
            #expect(
                !server.requests().contains("sent /gate/pink.wav"),
                "the body was complete already: \(server.requests())")
            FileManager.default.createFile(atPath: gate, contents: Data())
            let outcome = try await play.value
            try #require(outcome.status == 0, "\(outcome)")
            let heard = try await Self.heard(capture)
            #expect(abs(heard.integrated + 16) <= 1 && heard.truePeak <= -1, "\(heard)")
            #expect(daemon.log.contains("pink.wav: ") && daemon.log.contains(" LUFS (its first "), "\(daemon.log)")
        }
    }

    /// ffmpeg's momentary and short-term loudness every 100 ms: (time, M, S).
    static func readings(_ capture: String) async throws -> [(time: Double, momentary: Double, shortTerm: Double)] {
        let outcome = try await Runner.run(
            "ffmpeg", ["-nostdin", "-nostats", "-hide_banner", "-i", capture, "-af", "ebur128", "-f", "null", "-"])
        try #require(outcome.status == 0, "ffmpeg: \(outcome)")
        return outcome.stderr.split(separator: "\n").compactMap { line in
            func value(_ label: String) -> Double? {
                line.range(of: label).flatMap { Double(line[$0.upperBound...].split(separator: " ").first ?? "") }
            }
            guard let time = value("t:"), let momentary = value("M:"), let shortTerm = value("S:") else { return nil }
            return (time, momentary, shortTerm)
        }
    }

    @Test("a live stream's gain follows it slowly: never over 1 dB a second, within ±3 LU of -16 from 15 s on")
    func liveStream() async throws {
        // A steady tone near -30 LUFS, longer than the play (no seam), so the capture's momentary
        // loudness moves only with the gain.
        let clip = try Harness.capturePath("quiet-stream") + ".mp3"
        let sox = try await Runner.run(
            "sox",
            [
                "-R", "-D", "-V1", "-n", "-r", "44100", "-c", "2", "-C", "128", clip,
                "synth", "30", "sine", "440", "gain", "-30"
            ])
        try #require(sox.status == 0, "\(sox)")
        let server = try IcyTestServer(serving: clip, options: ["--rate", StreamTests.realTime])
        defer { server.stop() }
        try await Self.withDefaults { runtime, _, _ in
            let capture = try Harness.capturePath("stream-level")
            let outcome = try await runtime.announce(
                ["play", "--stream", server.url(), "--duration", "20s", "-d", Harness.fileDevice(capture)],
                environment: StreamTests.direct)
            try #require(outcome.status == 0, "\(outcome)")
            let readings = try await Self.readings(capture).filter { $0.time >= 0.5 }  // M needs 400 ms
            try #require(readings.count > 150, "\(readings.count) readings")
            for (earlier, later) in zip(readings, readings.dropFirst(10)) {
                #expect(
                    later.momentary - earlier.momentary <= 1.1,
                    "rose \(later.momentary - earlier.momentary) dB in 1 s at \(later.time) s")
            }
            let settled = readings.filter { $0.time >= 15 }
            #expect(
                !settled.isEmpty && settled.allSatisfy { abs($0.shortTerm + 16) <= 3 },
                "short-term from 15 s: \(settled.map(\.shortTerm))")
        }
    }

    @Test(
        "--loudness 7 and --loudness loud are usage errors (64) naming the value; loudness = 3 in the config is one warning"
    )
    func badTargets() async throws {
        for value in ["7", "loud"] {
            let outcome = try await Runner.announce(["play", "/tmp/x.wav", "--loudness", value])
            #expect(outcome.status == 64, "\(outcome)")
            #expect(
                outcome.stderrLines.count == 1
                    && outcome.stderr.hasPrefix(
                        "announce: --loudness \(value): must be a loudness in LUFS from -40 to -5, like -16, or off"),
                "\(outcome)")
        }
        let tone = try await Self.clip("tone-bad-config", ["synth", "2", "sine", "440", "vol", "0.05"])
        try await Self.withDefaults(config: "loudness = 3\n") { runtime, daemon, _ in
            let heard = try await Self.heard(try await Self.play(runtime, ["play", tone], label: "bad-config"))
            #expect(abs(heard.integrated + 16) <= 1, "the key ignored, the default kept: \(heard.integrated)")
            #expect(
                daemon.log.contains(
                    "/announce/config:1: loudness must be a loudness in LUFS from -40 to -5, like -16, or off, not '3'"),
                "\(daemon.log)")
        }
    }
}
