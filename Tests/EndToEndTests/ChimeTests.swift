import Foundation
import Testing

/// `--chime` and `--chime-after` (DESIGN §4, Chimes): one item whose capture is the chime, the
/// clip and the closing tone joined without a gap, in none of the item's positions; the config
/// file's `[chime]` default per priority; bad chimes refused before anything is queued.
@Suite("Chimes before and after an item")
struct ChimeTests {
    @Test("chime, clip and closing tone are one item joined sample for sample; heard and duration are the clip's")
    func joined() async throws {
        let chime = try await LoudnessTests.clip(
            "chime-a", rate: 48_000, ["synth", "0.3", "sine", "1320", "vol", "0.3"])
        let clip = try await LoudnessTests.clip(
            "chime-clip", rate: 48_000, ["synth", "0.5", "sine", "440", "vol", "0.3"])
        let closing = try await LoudnessTests.clip(
            "chime-z", rate: 48_000, ["synth", "0.2", "sine", "660", "vol", "0.3"])
        try await LoudnessTests.withDefaults(config: "loudness = off\n") { runtime, _, _ in
            let capture = try Harness.capturePath("chimed")
            let outcome = try await runtime.announce([
                "play", clip, "--chime", chime, "--chime-after", closing, "--json",
                "-d", Harness.fileDevice(capture)
            ])
            #expect(outcome.status == 0, "\(outcome)")
            let finished = outcome.stdout.split(separator: "\n").compactMap { WireEvent(line: $0) }.first
            #expect(finished?.heard == 0.5 && finished?.outcome?.kind == "played", "\(outcome.stdout)")
            let played = try await StreamTests.soxSamples(capture)
            var expected: [Double] = []
            for file in [chime, clip, closing] { expected += try await StreamTests.soxSamples(file) }
            #expect(played.count == expected.count, "\(played.count / 2) frames, not \(expected.count / 2)")
            #expect(played == expected, "chime, clip and closing tone back to back")
            #expect(try await runtime.announce(["queue"]).stdout.contains("nothing"), "one item, gone")
        }
    }

    @Test("a chime of another rate and width is converted; the clip follows it at once, sample for sample")
    func converted() async throws {
        let chime = try await LoudnessTests.clip(
            "chime-44", rate: 44_100, channels: 1, ["synth", "0.4", "sine", "990", "vol", "0.3"])
        let clip = try await LoudnessTests.clip("chime-48", rate: 48_000, ["synth", "0.5", "sine", "440", "vol", "0.3"])
        try await LoudnessTests.withDefaults(config: "loudness = off\n") { runtime, _, _ in
            let capture = try Harness.capturePath("chime-converted")
            let outcome = try await runtime.announce(["play", clip, "--chime", chime, "-d", Harness.fileDevice(capture)]
            )
            #expect(outcome.status == 0, "\(outcome)")
            let played = try await StreamTests.soxSamples(capture)
            let own = try await StreamTests.soxSamples(clip)
            let chimeFrames = (played.count - own.count) / 2
            #expect(abs(chimeFrames - 19_200) <= 2, "0.4 s at 48 kHz: \(chimeFrames) frames")
            #expect(Array(played.suffix(own.count)) == own, "the clip right after the chime, untouched")
            #expect(played.prefix(chimeFrames * 2).contains { abs($0) > 0.1 }, "the chime is heard")
        }
    }

    @Test(
        "[chime] high = SOUND chimes high items only; --chime none turns it off; say --chime too; each part at -16 LUFS"
    )
    func defaults() async throws {
        // Mono before stereo: measured as mono, it must be as loud in the clip's two channels.
        let chime = try await LoudnessTests.clip(
            "chime-quiet", rate: 48_000, channels: 1, ["synth", "1", "sine", "1000", "vol", "0.02"])
        let clip = try await LoudnessTests.clip("chime-loud", rate: 48_000, ["synth", "2", "pinknoise", "vol", "0.5"])
        // The client reads [chime], as it reads the rest of the user's config.
        let home = try LoudnessTests.configHome("[chime]\nhigh = \(chime)\n")
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: "null", environment: ["XDG_CONFIG_HOME": home])
            func seconds(_ arguments: [String]) async throws -> (Double, String) {
                let capture = try Harness.capturePath("chime-default")
                let outcome = try await runtime.announce(
                    arguments + ["-d", Harness.fileDevice(capture)], environment: ["XDG_CONFIG_HOME": home])
                try #require(outcome.status == 0 && outcome.stderr.isEmpty, "\(arguments): \(outcome)")
                let soxi = try await Runner.run("soxi", ["-D", capture])
                return (Double(soxi.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, capture)
            }
            let (high, capture) = try await seconds(["play", clip, "--priority", "high"])
            #expect(abs(high - 3) < 0.01, "chime and clip: \(high) s")
            let (normal, _) = try await seconds(["play", clip])
            #expect(abs(normal - 2) < 0.01, "normal has no chime: \(normal) s")
            let (none, _) = try await seconds(["play", clip, "--priority", "high", "--chime", "none"])
            #expect(abs(none - 2) < 0.01, "--chime none: \(none) s")
            // Each part normalised: the quiet chime and the loud clip both at -16 LUFS.
            for (start, length, what) in [("0", "1", "chime"), ("1", "2", "clip")] {
                let part = capture + ".\(what).wav"
                let trim = try await Runner.run("sox", [capture, part, "trim", start, length])
                try #require(trim.status == 0, "\(trim)")
                let level = try await LoudnessTests.heard(part).integrated
                #expect(abs(level + 16) <= 1, "\(what): \(level) LUFS")
            }
            let (said, _) = try await seconds(["say", "Chimed.", "--chime", chime])
            #expect(said > 1.3, "say --chime: \(said) s")
        }
    }

    /// Nothing in the config file is fatal: a `--chime` given is checked as an option (66, 65),
    /// a `[chime]` entry only warns.
    @Test("a [chime] entry that cannot play: one warning naming the file's line, and the item plays without it")
    func badConfiguredChime() async throws {
        let clip = try await LoudnessTests.clip("chime-config-bad", ["synth", "0.5", "sine", "440"])
        let home = try LoudnessTests.configHome("[chime]\nhigh = /nonexistent/ding.wav\n")
        let config = home + "/announce/config"
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("chime-config-bad")
            let outcome = try await runtime.announce(
                ["play", clip, clip, "--priority", "high", "-d", Harness.fileDevice(capture)],
                environment: ["XDG_CONFIG_HOME": home])
            #expect(outcome.status == 0, "\(outcome)")
            #expect(
                outcome.stderrLines == [
                    "announce: warning: \(config): [chime] high = /nonexistent/ding.wav: no such file; it plays without a chime"
                ], "\(outcome)")
            let soxi = try await Runner.run("soxi", ["-D", capture])
            #expect(
                abs((Double(soxi.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 1) < 0.01, "\(soxi)")
            let quiet = try await runtime.announce(
                ["play", "-q", clip, "--priority", "high", "-d", "null"], environment: ["XDG_CONFIG_HOME": home])
            #expect(quiet.status == 0 && quiet.stderr.isEmpty, "-q: \(quiet)")
        }
    }

    @Test("a missing chime is 66 and one that is not audio 65, one line naming it as given, nothing queued")
    func badChimes() async throws {
        let clip = try await LoudnessTests.clip("chime-bad", ["synth", "0.2", "sine", "440"])
        try await withDaemonRuntime { runtime in
            for (chime, status, reason) in [
                ("no-such-sound", 66, "no such file"), ("/etc/passwd", 65, "unknown format")
            ] {
                let outcome = try await runtime.announce(["play", clip, "--chime", chime, "--no-wait", "-d", "null"])
                #expect(outcome.status == Int32(status), "\(outcome)")
                #expect(
                    outcome.stderrLines.count == 1 && outcome.stderr.hasPrefix("announce: --chime \(chime): \(reason)"),
                    "\(outcome)")
            }
            #expect(runtime.mediaEntries().isEmpty)
            let status = try await runtime.announce(["status", "--json"])
            #expect(!status.stdout.contains(clip), "nothing was queued: \(status.stdout)")
        }
    }
}
