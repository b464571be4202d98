import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Quiet mode end to end (DESIGN §3): the built binary, a private runtime directory, ALSA's
/// `file:` device. Each play gets its own capture file, closed before `play` returns.
@Suite("Quiet mode", .serialized)
struct QuietTests {
    /// `announce play [ARGS] CLIP -d <fresh capture>`: silenced (75, one "silenced" line, nothing written).
    private func expectSilenced(
        _ runtime: DaemonRuntime, _ arguments: [String] = [], label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let capture = try Harness.capturePath(label)
        let clip = try Tones.clip(440)
        let result = try await runtime.announce(
            ["play"] + arguments + ["-d", Harness.fileDevice(capture), clip], killAfter: 10)
        #expect(result.status == 75, "\(result)", sourceLocation: sourceLocation)
        #expect(
            result.stderrLines == ["announce: \(clip): silenced (quiet mode)"], "\(result)",
            sourceLocation: sourceLocation)
        #expect(
            try WAVCapture.audioBytes(atPath: capture) == 0, "a silenced item wrote audio",
            sourceLocation: sourceLocation)
    }

    /// `announce play [ARGS] CLIP -d <fresh capture>`: played (0) and the tone is in the capture.
    private func expectPlayed(
        _ runtime: DaemonRuntime, _ arguments: [String] = [], label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let capture = try Harness.capturePath(label)
        let result = try await runtime.announce(
            ["play"] + arguments + ["-d", Harness.fileDevice(capture), try Tones.clip(550)],
            killAfter: 10)
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        #expect(try Tones.heardOrder(capture: capture, candidates: [440, 550]) == [550], sourceLocation: sourceLocation)
    }

    /// `announce quiet --json`, decoded.
    private func quietState(_ runtime: DaemonRuntime) async throws -> [String: Any] {
        let result = try await runtime.announce(["quiet", "--json"])
        try #require(result.status == 0, "\(result)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
    }

    /// Local `HH:MM` `minutes` from now.
    private func localClock(minutesFromNow minutes: Int) -> String {
        var clock = time(nil) + time_t(minutes * 60)
        var fields = tm()
        localtime_r(&clock, &fields)
        return String(format: "%02d:%02d", fields.tm_hour, fields.tm_min)
    }

    @Test("quiet on silences the default category and ambient; playback plays; quiet off plays again")
    func onAndOff() async throws {
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("quiet-default")))
            try await runtime.control("quiet", "on")
            let state = try await quietState(runtime)
            #expect(state["quiet"] as? Bool == true && state["setting"] as? String == "on", "\(state)")
            #expect(try await runtime.status().quiet == true)

            try await expectSilenced(runtime, label: "quiet-on-default")
            try await expectSilenced(runtime, ["--category", "ambient"], label: "quiet-on-ambient")
            try await expectPlayed(runtime, ["--category", "playback"], label: "quiet-on-playback")
            try await expectPlayed(runtime, ["--category", "multi-route"], label: "quiet-on-multi-route")

            // --json reports the outcome kind.
            let json = try await runtime.announce(["play", "--json", "-q", try Tones.clip(440)], killAfter: 10)
            #expect(json.status == 75 && json.stdout.contains(#""kind":"silenced""#), "\(json)")

            try await runtime.control("quiet", "off")
            #expect(try await runtime.status().quiet == false)
            try await expectPlayed(runtime, label: "quiet-off-default")
        }
    }

    @Test("play --category refuses the recording categories with 64")
    func refusedCategories() async throws {
        try await withDaemonRuntime { runtime in
            for category in ["record", "play-and-record", "audio-processing", "loud"] {
                let result = try await runtime.announce(["play", "--category", category, try Tones.clip(440)])
                #expect(result.status == 64, "\(category): \(result)")
                #expect(result.stderrLines.count == 1 && result.stderr.contains(category), "\(result)")
            }
            #expect(!runtime.daemonLockHeld, "nothing was queued, so no daemon was needed")
        }
    }

    @Test("quiet until a time ahead silences; the state names the time")
    func until() async throws {
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("quiet-until-default")))
            // Two minutes ahead, so it is still ahead (by a minute or more) when the play starts.
            let end = localClock(minutesFromNow: 2)
            let set = try await runtime.announce(["quiet", "until", end])
            #expect(set.status == 0 && set.stdout.contains("quiet: on (announce quiet until \(end))"), "\(set)")
            let state = try await quietState(runtime)
            #expect(state["setting"] as? String == "until", "\(state)")
            let until = try #require(state["until"] as? Double)
            #expect(
                until > Date().timeIntervalSince1970 + 55 && until <= Date().timeIntervalSince1970 + 125, "\(state)")
            try await expectSilenced(runtime, label: "quiet-until")

            let bad = try await runtime.announce(["quiet", "until"])
            #expect(bad.status == 64, "\(bad)")
        }
    }

    @Test("quiet hours from the config file silence; quiet off overrides them; bad lines are warnings")
    func configQuietHours() async throws {
        try await withDaemonRuntime { runtime in
            // A window from an hour ago to an hour ahead, local time (it may cross midnight).
            let window = "\(localClock(minutesFromNow: -60))-\(localClock(minutesFromNow: 60))"
            let home = runtime.path + "/config-home"
            try FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
            let daemonDevice = Harness.fileDevice(try Harness.capturePath("quiet-config-default"))
            try """
            # test config
            device = \(daemonDevice)
            duck-level = -9dB
            quiet-hours = \(window)
            colour = blue
            quiet-hours = 7:00
            \(Harness.baseConfig)
            """.write(toFile: home + "/announce/config", atomically: true, encoding: .utf8)
            let environment: [String: String?] = ["XDG_CONFIG_HOME": home]

            // No --device: the config file's device.
            let daemon = try await runtime.startDaemon(device: nil, environment: environment)
            let status = try await runtime.status()
            #expect(status.device == daemonDevice)
            #expect(status.quiet == true && status.quietHours == [window] && status.quietSetting == nil, "\(status)")
            let log = daemon.log
            #expect(log.contains("warning: \(home)/announce/config:5: unknown key 'colour'"), "\(log)")
            #expect(log.contains("warning: \(home)/announce/config:6: "), "\(log)")

            try await expectSilenced(runtime, label: "quiet-hours-default")
            try await expectPlayed(runtime, ["--category", "playback"], label: "quiet-hours-playback")

            // Sound now, inside the window.
            try await runtime.control("quiet", "off")
            let state = try await quietState(runtime)
            #expect(state["quiet"] as? Bool == false && state["setting"] as? String == "off", "\(state)")
            try await expectPlayed(runtime, label: "quiet-hours-off")

            // Without a daemon, `announce quiet` reads the same files (and shows the config's problems).
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit(timeout: 10))
            let offline = try await runtime.announce(["quiet"], environment: environment)
            #expect(offline.status == 0 && offline.stdout.hasPrefix("quiet: off (announce quiet off"), "\(offline)")
            #expect(offline.stdout.contains("quiet hours: \(window)"), "\(offline)")
            #expect(offline.stderrLines.count == 2, "\(offline)")
        }
    }

    @Test("a daemon restart keeps quiet on")
    func restartKeepsQuiet() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("quiet-restart-default"))
            let first = try await runtime.startDaemon(device: device)
            let events = try await runtime.subscribe()
            try await runtime.control("quiet", "on")
            let seen = try await offPool { try events.events { $0.event == "quiet" } }
            let announced = try #require(seen.last)
            #expect(announced.quiet == true && announced.state == "on", "the quiet event: \(announced)")

            first.signal(SIGTERM)
            #expect(await first.waitForExit(timeout: 10), "daemon did not exit on SIGTERM")
            let second = try await runtime.startDaemon(device: device)
            #expect(second.pid != first.pid)
            let state = try await quietState(runtime)
            #expect(state["quiet"] as? Bool == true && state["setting"] as? String == "on", "\(state)")
            try await expectSilenced(runtime, label: "quiet-restart")
        }
    }
}
