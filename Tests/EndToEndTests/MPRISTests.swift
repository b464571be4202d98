import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// announce on a private D-Bus session bus (DESIGN §3, Other players), with real programs: mpv
/// playing through mpv-mpris, and playerctl. The daemon plays on the real-time paced device, so
/// an item lasts as long as it sounds. Players are watched through `playerctl --follow status`;
/// what announce did on the bus is known done once announce's own player answers a call (its
/// bus thread shows the queue's state, pauses or resumes the others, then answers calls).
@Suite("MPRIS", .serialized, PacedAudioTrait(name: "paced-mpris"), .timeLimit(.minutes(3)))
struct MPRISTests {
    /// A private bus, a paced session on it, and mpv playing (its follower has seen Playing).
    private func withPlayingMPV(
        _ label: String,
        _ body: (PrivateSessionBus, PacedSession, StatusFollower) async throws -> Void
    ) async throws {
        let bus = try PrivateSessionBus(label)
        defer { bus.stop() }
        try await withPacedSession("mpris-\(label)", environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]) {
            session in
            try await session.start()
            _ = try bus.startMPV(session.paced.clips.a3, label: "mpv")
            let mpv = try bus.follow("mpv")
            try await mpv.waitFor("Playing")
            do { try await body(bus, session, mpv) } catch {
                throw HarnessError("\(error); the daemon's log: \(session.daemonLog)")
            }
        }
    }

    /// announce's player says `status`, through a call its bus thread answers only after it
    /// has carried out the queue's state it last took.
    private func announceIs(
        _ status: String, on bus: PrivateSessionBus, announce: StatusFollower,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await announce.waitFor(status, after: 1)
        let answer = try await bus.playerctl("-p", "announce", "status")
        #expect(answer.stdout == status + "\n", "\(answer)", sourceLocation: sourceLocation)
    }

    @Test("a solo-ambient item pauses a playing mpv while it plays and resumes it after")
    func soloAmbientPausesAndResumes() async throws {
        try await withPlayingMPV("solo") { bus, session, mpv in
            let play = session.launch(["play", session.paced.clips.a2])
            let seen = try await mpv.waitFor("Paused", after: 1)
            let during = try await session.announce(["status", "--json"])
            #expect(during.stdout.contains(#""playing":{"#), "announce was not playing when mpv paused: \(during)")
            let outcome = try await play.value
            #expect(outcome.status == 0, "\(outcome)")
            try await mpv.waitFor("Playing", after: seen.count)
            #expect(mpv.sincePlaying == ["Playing", "Paused", "Playing"])
        }
    }

    @Test("a player the user played and paused again while announce held it stays paused")
    func userTakenPlayerIsNotResumed() async throws {
        try await withPlayingMPV("user") { bus, session, mpv in
            let announce = try bus.follow("announce")
            let play = session.launch(["play", session.paced.clips.a3])
            var seen = try await mpv.waitFor("Paused", after: 1)
            #expect(try await bus.playerctl("-p", "mpv", "play").status == 0)
            seen = try await mpv.waitFor("Playing", after: seen.count)
            #expect(try await bus.playerctl("-p", "mpv", "pause").status == 0)
            seen = try await mpv.waitFor("Paused", after: seen.count)
            #expect(try await play.value.status == 0)
            try await announceIs("Stopped", on: bus, announce: announce)
            #expect(try await bus.playerctl("-p", "mpv", "status").stdout == "Paused\n")
            #expect(mpv.sincePlaying == ["Playing", "Paused", "Playing", "Paused"])
        }
    }

    @Test("a daemon stopped (SIGTERM) while its item plays resumes the player it paused")
    func stoppedDaemonResumesPlayers() async throws {
        try await withPlayingMPV("sigterm") { bus, session, mpv in
            #expect(try await session.announce(["play", "--no-wait", session.paced.clips.a3]).status == 0)
            let seen = try await mpv.waitFor("Paused", after: 1)
            #expect(session.runtime.signalLockHolder(SIGTERM) != nil)
            try await mpv.waitFor("Playing", after: seen.count)
            #expect(mpv.sincePlaying == ["Playing", "Paused", "Playing"])
        }
    }

    @Test("a daemon killed (SIGKILL) while it kept a player paused: the next daemon resumes it at its start")
    func killedDaemonsPlayerIsResumedByTheNext() async throws {
        try await killDaemonWhilePaused("sigkill") { _, _ in }
    }

    @Test("a player the user stopped after the daemon was killed is not touched by the next")
    func killedDaemonsPlayerTheUserStoppedIsLeftAlone() async throws {
        try await killDaemonWhilePaused("sigkill-user") { bus, mpv in
            let seen = mpv.statuses.count
            #expect(try await bus.playerctl("-p", "mpv", "stop").status == 0)
            try await mpv.waitFor("Stopped", after: seen)
        }
    }

    /// announce pauses mpv, is killed with SIGKILL, `meanwhile` runs, and the next daemon starts (with the
    /// queue paused, so the item the spool kept does not pause mpv again): mpv is resumed if it was
    /// still Paused, else left as it is.
    private func killDaemonWhilePaused(
        _ label: String,
        meanwhile: (PrivateSessionBus, StatusFollower) async throws -> Void
    ) async throws {
        try await withPlayingMPV(label) { bus, session, mpv in
            let announce = try bus.follow("announce")
            #expect(try await session.announce(["play", "--no-wait", session.paced.clips.a3]).status == 0)
            let paused = try await mpv.waitFor("Paused", after: 1)
            let journal = session.runtime.path + "/paused-players"
            let written = (try? String(contentsOfFile: journal, encoding: .utf8)) ?? ""
            #expect(
                written.contains(#""org.mpris.MediaPlayer2.mpv""#),
                "the journal: \(written); the daemon's log: \(session.daemonLog)")
            #expect(session.runtime.signalLockHolder(SIGKILL) != nil)
            #expect(await session.runtime.waitForLockRelease(timeout: 10), "the daemon outlived SIGKILL")
            #expect(try await bus.playerctl("-p", "mpv", "status").stdout == "Paused\n", "the kill resumed it")
            try await meanwhile(bus, mpv)
            let before = mpv.statuses
            try await session.runtime.control("pause")
            try await session.runtime.startDaemon(device: "pulse", arguments: ["--idle-exit", "60s"])
            if before.last == "Paused" { try await mpv.waitFor("Playing", after: before.count) }
            // Its bus thread answers once it is past the resume (or the decision not to).
            try await announceIs("Paused", on: bus, announce: announce)
            let expected = before.last == "Paused" ? ["Playing", "Paused", "Playing"] : ["Playing", "Paused", "Stopped"]
            #expect(mpv.sincePlaying == expected && paused.last == "Paused")
            #expect(!FileManager.default.fileExists(atPath: journal), "the journal outlived the next start")
        }
    }

    @Test("--no-notify-others on the last item leaves the paused player paused")
    func noNotifyOthersLeavesPlayersPaused() async throws {
        try await withPlayingMPV("no-notify") { bus, session, mpv in
            let announce = try bus.follow("announce")
            let outcome = try await session.announce(["play", "--no-notify-others", session.paced.clips.b])
            #expect(outcome.status == 0, "\(outcome)")
            try await announceIs("Stopped", on: bus, announce: announce)
            #expect(try await bus.playerctl("-p", "mpv", "status").stdout == "Paused\n")
            #expect(mpv.sincePlaying == ["Playing", "Paused"])
        }
    }

    @Test("an ambient item mixes: it pauses no player")
    func ambientPausesNothing() async throws {
        try await withPlayingMPV("ambient") { bus, session, mpv in
            let announce = try bus.follow("announce")
            let outcome = try await session.announce(["play", "--category", "ambient", session.paced.clips.b])
            #expect(outcome.status == 0, "\(outcome)")
            try await announceIs("Stopped", on: bus, announce: announce)
            #expect(
                announce.statuses.contains("Playing"), "announce never showed the ambient item: \(announce.statuses)")
            #expect(try await bus.playerctl("-p", "mpv", "status").stdout == "Playing\n")
            #expect(mpv.sincePlaying == ["Playing"])
        }
    }

    @Test("playerctl -p announce: metadata names the item; pause, play, play-pause, next and stop act on the queue")
    func playerctlControlsTheQueue() async throws {
        let bus = try PrivateSessionBus("controls")
        defer { bus.stop() }
        try await withPacedSession("mpris-controls", environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]) {
            session in
            try await session.start()
            let clips = session.paced.clips
            let announce = try bus.follow("announce")
            // The length is known once the first frames went out (`started`), a moment after Playing.
            let length = try bus.follow("announce", "metadata", "mpris:length")
            #expect(try await session.announce(["play", "--no-wait", clips.a3, clips.a2]).status == 0)
            try await announce.waitFor("Playing")
            try await length.waitFor("3000000")
            let title = try await bus.playerctl("-p", "announce", "metadata", "xesam:title")
            #expect(title.stdout == clips.a3 + "\n", "\(title)")

            #expect(try await bus.playerctl("-p", "announce", "pause").status == 0)
            _ = try await session.waitForEvent("paused") { $0.event == "paused" }
            #expect(try await session.announce(["status", "--json"]).stdout.contains(#""paused":true"#))
            try await announceIs("Paused", on: bus, announce: announce)

            #expect(try await bus.playerctl("-p", "announce", "play").status == 0)
            let resumed = try await session.waitForEvent("resumed") { $0.event == "resumed" }
            #expect(try await session.announce(["status", "--json"]).stdout.contains(#""paused":false"#))

            // PlayPause: a pause while playing, a resume while paused.
            #expect(try await bus.playerctl("-p", "announce", "play-pause").status == 0)
            _ = try await session.waitForEvent("second paused") { $0.event == "paused" && $0.time > resumed.time }
            #expect(try await bus.playerctl("-p", "announce", "play-pause").status == 0)
            _ = try await session.waitForEvent("second resumed") { $0.event == "resumed" && $0.time > resumed.time }

            #expect(try await bus.playerctl("-p", "announce", "next").status == 0)
            let skipped = try await session.waitForEvent("a3 finished") {
                $0.event == "finished" && $0.path == clips.a3
            }
            #expect(skipped.outcome?.kind == "cancelled", "\(skipped)")
            _ = try await session.waitForEvent("a2 started") { $0.event == "started" && $0.path == clips.a2 }

            #expect(try await bus.playerctl("-p", "announce", "stop").status == 0)
            let stopped = try await session.waitForEvent("a2 finished") {
                $0.event == "finished" && $0.path == clips.a2
            }
            #expect(stopped.outcome?.kind == "cancelled", "\(stopped)")
            let after = try await session.announce(["status", "--json"])
            #expect(!after.stdout.contains(#""playing":{"#) && after.stdout.contains(#""queued":[]"#), "\(after)")
            try await announceIs("Stopped", on: bus, announce: announce)
        }
    }
}

/// The daemon with no session bus, or one it cannot reach: it plays as ever and `status` says why.
@Suite("MPRIS: no session bus")
struct NoSessionBusTests {
    @Test func statusSaysWhyAndPlayWorks() async throws {
        let userBus = "/run/user/\(getuid())/bus"
        var info = stat()
        let hasUserBus = lstat(userBus, &info) == 0
        for (address, expected) in [
            (
                nil,
                hasUserBus
                    ? "on the session bus unix:path=\(userBus)"
                    : "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and \(userBus) does not exist"
            ),
            (
                "unix:path=/nonexistent/announce-test-bus",
                "not on the session bus: cannot connect to the session bus unix:path=/nonexistent/announce-test-bus"
            )
        ] {
            try await withDaemonRuntime { runtime in
                try await runtime.startDaemon(device: "null", environment: ["DBUS_SESSION_BUS_ADDRESS": address])
                let json = try await runtime.announce(["status", "--json"])
                let status = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
                let sessionBus = status?["sessionBus"] as? String ?? ""
                #expect(json.status == 0 && sessionBus.contains(expected), "\(json)")
                let text = try await runtime.announce(["status"])
                #expect(text.status == 0 && text.stdout.contains(expected), "\(text)")
                // Not on a user's own bus: a test must not pause their players.
                if address != nil {
                    #expect(
                        try await runtime.announce(["play", try Harness.fixture("wav16-stereo.wav"), "-d", "null"])
                            .status == 0)
                }
            }
        }
    }
}
