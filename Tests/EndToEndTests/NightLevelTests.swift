import Foundation
import Testing

/// Quiet mode's night level (`quiet-level = -15dB`, DESIGN §3, Quiet mode): what quiet mode
/// would silence plays 15 dB lower instead and ends `played`; playback items keep their level.
/// Levels are ffmpeg's ebur128 of the file device's captures.
@Suite("Quiet mode's night level")
struct NightLevelTests {
    @Test(
        "quiet-level = -15dB: an ambient item and an alert play 15 dB lower (±1) and exit 0; playback keeps its level; quiet and status say it"
    )
    func nightLevel() async throws {
        let tone = try await LoudnessTests.clip("night-tone", ["synth", "2", "sine", "440", "vol", "0.2"])
        let alert = try await LoudnessTests.clip(
            "night-alert", rate: 48_000, ["synth", "0.8", "sine", "880", "vol", "0.2"])
        try await LoudnessTests.withDefaults(config: "loudness = off\nquiet-level = -15dB\n") { runtime, _, _ in
            func level(_ arguments: [String], _ label: String) async throws -> Double {
                try await LoudnessTests.heard(try await LoudnessTests.play(runtime, arguments, label: label)).integrated
            }
            let full = try await level(["play", tone], "full")
            let fullAlert = try await level(["alert", "--wait", alert], "full-alert")
            try await runtime.control("quiet", "on")
            let night = try await level(["play", tone], "night")
            #expect(abs(full - night - 15) <= 1, "ambient: \(full) then \(night) LUFS")
            let nightAlert = try await level(["alert", "--wait", alert], "night-alert")
            #expect(abs(fullAlert - nightAlert - 15) <= 1, "alert: \(fullAlert) then \(nightAlert) LUFS")
            let loud = try await level(["alert", "--wait", "--ignore-quiet", alert], "ignore-quiet")
            #expect(abs(fullAlert - loud) <= 0.2, "--ignore-quiet: \(loud) LUFS")
            let playback = try await level(["play", "--category", "playback", tone], "playback")
            #expect(abs(full - playback) <= 0.2, "playback: \(playback) LUFS")

            let shown = try await runtime.announce(["quiet"])
            #expect(shown.status == 0 && shown.stdout.contains("night level: -15 dB"), "\(shown)")
            let status = try await runtime.announce(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            #expect(object?["quietLevel"] as? Double == -15 && object?["quiet"] as? Bool == true, "\(status.stdout)")
        }
    }

    @Test("quiet-level = 10m in the config is one warning naming the line, and quiet mode silences as before")
    func badLevel() async throws {
        let tone = try await LoudnessTests.clip("night-bad", ["synth", "1", "sine", "440", "vol", "0.2"])
        try await LoudnessTests.withDefaults(config: "quiet-level = 10m\n") { runtime, daemon, _ in
            try await runtime.control("quiet", "on")
            let outcome = try await runtime.announce(["play", tone, "-d", "null"])
            #expect(outcome.status == 75 && outcome.stderr.contains("quiet mode"), "\(outcome)")
            #expect(
                daemon.log.contains(
                    "/announce/config:1: quiet-level must be silent or a level in dB from -60 to -1, like -15dB, not '10m'"
                ),
                "\(daemon.log)")
        }
    }
}

/// `wake-up = 300ms` (DESIGN §4, Speakers that wake slowly): silence before the first item when
/// the device opens, none while it stays open, counted in no position.
@Suite("Wake-up silence for sinks that sleep")
struct WakeUpTests {
    @Test(
        "300 ms of silence before the first item only: the capture is silence, then both clips sample for sample; heard counts the clip alone"
    )
    func wakeUp() async throws {
        let first = try await LoudnessTests.clip("wake-a", rate: 48_000, ["synth", "0.5", "sine", "440", "vol", "0.3"])
        let second = try await LoudnessTests.clip("wake-b", rate: 48_000, ["synth", "0.5", "sine", "660", "vol", "0.3"])
        try await LoudnessTests.withDefaults(config: "loudness = off\nwake-up = 300ms\n") { runtime, _, _ in
            let capture = try Harness.capturePath("wake-up")
            let outcome = try await runtime.announce([
                "play", first, second, "--json", "-d", Harness.fileDevice(capture)
            ])
            #expect(outcome.status == 0, "\(outcome)")
            let heard = outcome.stdout.split(separator: "\n").compactMap { WireEvent(line: $0) }.map(\.heard)
            #expect(heard == [0.5, 0.5], "the silence is heard as no part of the clips: \(outcome.stdout)")
            let played = try await StreamTests.soxSamples(capture)
            let expected =
                [Double](repeating: 0, count: 14_400 * 2) + (try await StreamTests.soxSamples(first))
                + (try await StreamTests.soxSamples(second))
            #expect(played.count == expected.count, "\(played.count / 2) frames, not \(expected.count / 2)")
            #expect(played == expected, "300 ms of silence, then the clips back to back")
        }
    }

    @Test(
        "keep-open = 5s: the next item plays on the device kept open, after silence as long as the pause and no second wake-up; silence follows until it closes 5 s later"
    )
    func keepOpen() async throws {
        let first = try await LoudnessTests.clip("open-a", rate: 48_000, ["synth", "0.5", "sine", "440", "vol", "0.3"])
        let second = try await LoudnessTests.clip("open-b", rate: 48_000, ["synth", "0.5", "sine", "660", "vol", "0.3"])
        let capture = try Harness.capturePath("keep-open")
        // The file device is the daemon's own: a reopen would start the capture again. Times are
        // the daemon's events' own (a loaded machine delivers them late).
        try await LoudnessTests.withDefaults(
            config: "loudness = off\nwake-up = 1s\nkeep-open = 5s\n",
            device: Harness.fileDevice(capture)
        ) { runtime, _, _ in
            let watcher = try await runtime.subscribe()
            let client = try runtime.client()
            func play(_ path: String) async throws -> (started: Double, finished: Double) {
                let reply = try await offPool {
                    try client.call(
                        #"{"v":1,"op":"play","items":[{"clip":{"path":"\#(path)","gain":1,"pan":0,"loops":0}}]}"#)
                }
                let id = try #require(reply.ids?.first, "\(reply)")
                let seen = try await offPool {
                    try watcher.events(until: { $0.event == "finished" && $0.id == id }, timeout: 20)
                }
                try #require(seen.last?.outcome?.kind == "played", "\(seen)")
                let started = try #require(seen.first { $0.event == "started" && $0.id == id }?.time, "\(seen)")
                return (started, try #require(seen.last?.time))
            }
            let a = try await play(first)
            // The pause between two announcements, which the open device spends playing silence.
            try await Task.sleep(for: .milliseconds(600))
            let b = try await play(second)
            let closed = try await offPool { try watcher.events(until: { $0.event == "device-closed" }, timeout: 15) }
            let open = try #require(closed.last?.time) - b.finished
            #expect(open > 4.9 && open < 7, "the device closed \(open) s after the queue emptied, not 5 s")

            let played = try await StreamTests.soxSamples(capture)
            let a1 = try await StreamTests.soxSamples(first)
            let b1 = try await StreamTests.soxSamples(second)
            let wake = 48_000 * 2
            try #require(played.count > wake + a1.count + b1.count, "\(played.count / 2) frames")
            #expect(played[..<wake].allSatisfy { $0 == 0 }, "1 s of wake-up silence first")
            #expect(played[wake..<(wake + a1.count)].elementsEqual(a1), "then the first clip, sample for sample")
            // The second clip starts where its first sound does, less the zeros it starts with.
            let bStart =
                try #require(played[(wake + a1.count)...].firstIndex { $0 != 0 }) - (b1.firstIndex { $0 != 0 } ?? 0)
            #expect(
                played[bStart..<min(played.count, bStart + b1.count)].elementsEqual(b1),
                "then the second clip, sample for sample")
            // As long as the daemon's own pause between them (a period more at most): no second
            // wake-up, no silence buffered ahead.
            let gap = Double(bStart - wake - a1.count) / 2 / 48_000
            let pause = b.started - a.finished
            #expect(
                pause > 0.55 && abs(gap - pause) < 0.1,
                "\(gap) s of silence between the clips for a pause of \(pause) s")
            // Silence at the clock's pace until the close, not as fast as the file takes it.
            let tail = Double(played.count - bStart - b1.count) / 2 / 48_000
            #expect(abs(tail - open) < 0.3, "\(tail) s of silence after the last clip, open \(open) s")
        }
    }
}
