import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Clips for `announce alert`'s refusals, made once per test process from a sox tone by ffmpeg.
enum AlertClips {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var made: [String: String] = [:]

    /// `name` made by `ffmpeg -i <0.3 s tone> ARGS name` (the codec and container from `arguments`).
    static func encoded(_ name: String, _ arguments: [String]) throws -> String {
        let source = try Tones.clip(440)
        return try lock.withLock {
            if let path = made[name] { return path }
            let dir = try Harness.workResult.get().appendingPathComponent("alert-clips").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let path = dir + "/" + name
            let errors = path + ".ffmpeg.err"
            defer { unlink(errors) }
            let ffmpeg = try ChildProcess(
                "ffmpeg",
                [
                    "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                    "-i", source
                ] + arguments + [path],
                environment: ProcessInfo.processInfo.environment, stdout: "/dev/null", stderr: errors)
            let status = ffmpeg.waitForExit(timeout: 60)
            guard status == 0, FileManager.default.fileExists(atPath: path) else {
                let message = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                throw HarnessError(
                    "ffmpeg could not make \(path) (\(status.map { "exit \($0)" } ?? "no exit within 60 s")): \(message)"
                )
            }
            made[name] = path
            return path
        }
    }

    /// An empty directory named like an alert.
    static func directory() throws -> String {
        let path = try Harness.workResult.get().appendingPathComponent("alert-clips/a-directory.wav").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// `announce alert` refuses what is not a short PCM WAV/CAF/AIFF before asking the daemon:
/// the documented exit code, exactly one `announce: FILE: reason` line, no daemon started.
@Suite("Alert refusals")
struct AlertRefusalTests {
    struct RefusalCase: Sendable, CustomTestStringConvertible {
        var name: String
        /// Makes the file and returns its path.
        var make: @Sendable () throws -> String
        var status: Int32
        /// What follows `announce: PATH: `.
        var reason: String
        var testDescription: String { "\(name) → \(status)" }
    }

    static func notAnAlert(_ kind: String) -> String {
        "alerts play PCM WAV, CAF or AIFF; this is \(kind) (use announce play)"
    }

    static let cases: [RefusalCase] = [
        RefusalCase(
            name: "FLAC", make: { try AlertClips.encoded("tone.flac", ["-c:a", "flac"]) },
            status: 65, reason: notAnAlert("FLAC")),
        // Recognised by content: a FLAC named .wav is still FLAC.
        RefusalCase(
            name: "FLAC named .wav",
            make: { try AlertClips.encoded("flac-inside.wav", ["-c:a", "flac", "-f", "flac"]) },
            status: 65, reason: notAnAlert("FLAC")),
        RefusalCase(
            name: "MP3", make: { try AlertClips.encoded("tone.mp3", ["-c:a", "libmp3lame"]) },
            status: 65, reason: notAnAlert("MP3")),
        RefusalCase(
            name: "Ogg Vorbis", make: { try AlertClips.encoded("tone.ogg", ["-c:a", "libvorbis"]) },
            status: 65, reason: notAnAlert("Ogg Vorbis")),
        RefusalCase(
            name: "IMA ADPCM WAV", make: { try AlertClips.encoded("adpcm.wav", ["-c:a", "adpcm_ima_wav"]) },
            status: 65, reason: notAnAlert("IMA ADPCM in WAV")),
        RefusalCase(
            name: "31.2 s WAV", make: { try Tones.clip(440, seconds: 31.2) },
            status: 65, reason: "31.2 s is longer than an alert's 30 s (use announce play)"),
        RefusalCase(
            name: "missing", make: { try Harness.workResult.get().appendingPathComponent("no-such-alert.wav").path },
            status: 66, reason: "no such file"),
        RefusalCase(name: "directory", make: { try AlertClips.directory() }, status: 66, reason: "is a directory")
    ]

    @Test("alert: exit code, one line naming the file and the reason, no daemon", arguments: cases)
    func refused(_ test: RefusalCase) async throws {
        let path = try test.make()
        try await withDaemonRuntime { runtime in
            for extra in [[], ["--wait"]] {
                let outcome = try await runtime.announce(["alert"] + extra + [path])
                BadInputTests.expectOneError(outcome, status: test.status, naming: "\(path): ")
                #expect(outcome.stderr == "announce: \(path): \(test.reason)\n", "\(outcome)")
            }
            #expect(!runtime.daemonLockHeld, "refused before the daemon was asked, so none was started")
        }
    }

    @Test("alert: 30 s or less of PCM passes the client's checks")
    func thirtySecondsPass() async throws {
        // Exactly 30 s is an alert: it is accepted, played and heard (--wait), with nothing on stderr.
        let path = try Tones.clip(440, seconds: 30)
        try await withDaemonRuntime { runtime in
            let outcome = try await runtime.announce(["alert", path, "--wait", "-d", "null"], killAfter: 20)
            #expect(outcome.signal == nil && outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
        }
    }

    @Test(
        "alert: bad options are usage errors (64)",
        arguments: [["--volume", "2"], ["--volume", "0.5", "--gain", "-3"], ["-d", ""], []])
    func usage(_ options: [String]) async throws {
        try await withDaemonRuntime { runtime in
            let outcome = try await runtime.announce(
                ["alert"] + options + (options.isEmpty ? [] : [try Tones.clip(440)]))
            #expect(outcome.status == 64, "\(outcome)")
            #expect(outcome.stderrLines.count == 1, "\(outcome)")
            #expect(!runtime.daemonLockHeld)
        }
    }
}

/// `play`'s session flags and devices: refusals that need no daemon (64, one line, no daemon started).
@Suite("Session flag refusals")
struct SessionFlagTests {
    struct UsageCase: Sendable, CustomTestStringConvertible {
        var options: [String]
        /// A part of the one stderr line.
        var says: String
        var testDescription: String { options.joined(separator: " ") }
    }

    static let cases: [UsageCase] = [
        UsageCase(options: ["--category", "record"], says: "announce only plays: category 'record' needs a microphone"),
        UsageCase(
            options: ["--category", "loud"],
            says: "unknown category 'loud'; valid: ambient, solo-ambient, playback, multi-route"),
        UsageCase(options: ["--mode", "voice-chat"], says: "announce only plays: mode 'voice-chat' needs a microphone"),
        UsageCase(
            options: ["--mode", "podcast"], says: "unknown mode 'podcast'; valid: default, spoken-audio, voice-prompt"),
        UsageCase(options: ["-d", "null", "-d", "default"], says: "several --device need --category multi-route"),
        UsageCase(
            options: ["--category", "playback", "--device", "null", "--device", "default"],
            says: "several --device need --category multi-route"),
        UsageCase(
            options: ["--category", "multi-route", "-d", "null", "-d", "null"], says: "--device null is given twice"),
        UsageCase(
            options: ["--category", "multi-route"] + (1...9).flatMap { ["-d", "dev\($0)"] }, says: "at most 8 --device"),
        UsageCase(options: ["--duck-level", "3"], says: "--duck-level 3: ducking lowers the other streams"),
        UsageCase(options: ["--duck-level", "+6dB"], says: "ducking lowers the other streams"),
        UsageCase(options: ["--duck-level", "-70"], says: "--duck-level must be a level in dB from -60 to 0"),
        UsageCase(options: ["--duck-level", "loud"], says: "--duck-level must be a level in dB from -60 to 0"),
        UsageCase(options: ["--if-busy", "maybe"], says: "--if-busy maybe: not one of wait, fail")
    ]

    @Test("play: 64, one line saying why, no daemon started", arguments: cases)
    func refused(_ test: UsageCase) async throws {
        try await withDaemonRuntime { runtime in
            let outcome = try await runtime.announce(["play"] + test.options + [try Tones.clip(440)])
            #expect(outcome.signal == nil && outcome.status == 64, "\(outcome)")
            #expect(outcome.stdout.isEmpty, "\(outcome)")
            #expect(outcome.stderrLines.count == 1, "exactly one line: \(outcome)")
            #expect(outcome.stderr.hasPrefix("announce: ") && outcome.stderr.contains(test.says), "\(outcome)")
            #expect(!runtime.daemonLockHeld, "nothing was queued, so no daemon was needed")
        }
    }

    @Test("play: each spelling of --duck-level and --if-busy is accepted")
    func accepted() async throws {
        try await withDaemonRuntime { runtime in
            // --delay holds the item, so nothing but the request and its spooling is involved.
            for options in [
                ["--duck-others", "--duck-level", "-12"], ["--duck-others", "--duck-level", "-12dB"],
                ["--duck-others", "--duck-level", "-12 dB"], ["--duck-others", "--duck-level=-60"],
                ["--if-busy", "wait"], ["--if-busy", "fail"], ["--mode", "Spoken_Audio"],
                ["--category", "playback", "--no-notify-others"]
            ] {
                let outcome = try await runtime.announce(
                    ["play", "--no-wait", "--delay", "1h", "-d", "null"] + options
                        + [try Tones.clip(440)])
                #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(options): \(outcome)")
            }
            // A mixable session starts at once: a delay makes no sense for it.
            let mixable = try await runtime.announce([
                "play", "--no-wait", "--delay", "1h", "-d", "null", "--category", "playback",
                "--mix-with-others", "--interrupt-spoken-audio", try Tones.clip(440)
            ])
            #expect(mixable.status == 64 && mixable.stderr.contains("starts at once"), "\(mixable)")
            try await runtime.control("clear")
        }
    }

    @Test("play: multi-route devices reach the spool as clip.device and clip.extraDevices")
    func multiRouteDevices() async throws {
        try await withDaemonRuntime { runtime in
            // Devices that open here: an unknown one is refused when the item is accepted.
            let captures = [try Harness.capturePath("route-a"), try Harness.capturePath("route-b")].map(
                Harness.fileDevice)
            let outcome = try await runtime.announce([
                "play", "--no-wait", "--delay", "1h", "--category", "multi-route",
                "-d", "null", "--device", captures[0], "-d", captures[1],
                try Tones.clip(440)
            ])
            try #require(outcome.status == 0, "\(outcome)")
            let id = outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let data = try Data(contentsOf: URL(fileURLWithPath: runtime.spoolPath + "/\(id).json"))
            let item = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let clip = try #require(item["clip"] as? [String: Any])
            #expect(clip["device"] as? String == "null")
            #expect(clip["extraDevices"] as? [String] == captures)
            #expect((item["session"] as? [String: Any])?["category"] as? String == "multi-route", "\(item)")
            try await runtime.control("clear")
        }
    }

    @Test("play: a session warning is one 'announce: warning:' line; -q silences it")
    func warnings() async throws {
        try await withDaemonRuntime { runtime in
            let clip = try Tones.clip(440)
            let warned = try await runtime.announce([
                "play", "--no-wait", "--delay", "1h", "-d", "null", "--mix-with-others", clip
            ])
            #expect(warned.status == 0, "\(warned)")
            #expect(
                warned.stderrLines == [
                    "announce: warning: --mix-with-others has no effect with category solo-ambient, which never mixes; use ambient or playback"
                ],
                "\(warned)")
            let quiet = try await runtime.announce([
                "play", "--no-wait", "--delay", "1h", "-d", "null", "--mix-with-others", "-q", clip
            ])
            #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet)")
            try await runtime.control("clear")
        }
    }
}
