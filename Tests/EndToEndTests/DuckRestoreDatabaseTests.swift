import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A duck never persists, also for a stream that ends while lowered (DESIGN §3): the server saved the
/// lowered volume in its restore database (module-stream-restore on PulseAudio, WirePlumber's
/// restore-stream on PipeWire), and announce puts the entry back, so the application's next stream
/// starts at its own volume. Run from the duck suites (OtherAudioDuckTests.swift), on their servers.
extension OtherAudioDuckChecks {
    /// The other player's entry name in the restore database (module-stream-restore's `pa_proplist_get_stream_group`).
    static func restoreName(_ world: World) -> String { "sink-input-by-application-name:" + world.otherName }

    /// The restore database's record of `world`'s player, read with tools not ours: on PulseAudio its
    /// ext-stream-restore entry (pulsectl); on PipeWire WirePlumber's saved state (its state file's lines
    /// for the player: pipewire-pulse reads back only the entries written through it).
    static func restoreRecord(_ world: World) async throws -> String {
        switch world.server.kind {
        case .pulseAudio:
            let out = world.directory + "/restore-entry.json"
            unlink(out)
            let script = Harness.repoRoot.appendingPathComponent("Tests/Shell/restore-entry.py").path
            let child = try world.server.start(["/usr/bin/python3", script, restoreName(world)], stdout: out)
            guard await child.status(within: 10) == 0, let text = try? String(contentsOfFile: out, encoding: .utf8)
            else {
                throw HarnessError(
                    "restore-entry.py failed (python3-pulsectl): \((try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "")"
                )
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        case .pipeWire:
            let state = world.server.directory + "/state/wireplumber/restore-stream"
            let prefix = "Output/Audio:application.name:" + world.otherName + ":"
            let text = (try? String(contentsOfFile: state, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.hasPrefix(prefix) }.sorted().joined(separator: "\n")
        }
    }

    /// Polls the record until `accept` takes it (WirePlumber writes its state a second after a change).
    static func waitForRecord(_ world: World, timeout: Double, _ accept: (String) -> Bool) async throws -> String {
        let start = monotonicNow()
        var record = try await restoreRecord(world)
        while !accept(record) && monotonicNow() - start < timeout {
            try await Task.sleep(for: .milliseconds(100))
            record = try await restoreRecord(world)
        }
        return record
    }

    /// On PulseAudio the entry put back is kept as written: a volume its user sets right after (here
    /// straight into the database, as a mixer's stream restore does) is not replaced by announce's late
    /// rewrites (PipeWire's, 1 s and 3 s after the stream ended). The entry of `before` is written back after.
    static func userVolumeStays(_ world: World, before: String) async throws {
        func write(_ entry: [String: Any]) async throws {
            let file = world.directory + "/user-entry.json"
            try JSONSerialization.data(withJSONObject: entry).write(to: URL(fileURLWithPath: file))
            let child = try world.server.start(
                [
                    "/usr/bin/python3", "-c",
                    """
                    import json, sys, pulsectl
                    e = json.load(open(sys.argv[2]))
                    with pulsectl.Pulse("announce-test-user") as pulse:
                        pulse.stream_restore_write(sys.argv[1], mode="replace", volume=[v / 65536 for v in e["volume"]],
                                                   channel_list=e["channels"], device=e["device"], mute=e["mute"])
                    """, restoreName(world), file
                ], stdout: world.directory + "/user-entry.out")
            guard await child.status(within: 10) == 0 else {
                throw HarnessError("writing the user's entry failed (python3-pulsectl)")
            }
        }
        guard let original = try JSONSerialization.jsonObject(with: Data(before.utf8)) as? [String: Any] else {
            throw HarnessError("no entry before the duck: \(before)")
        }
        // The player's stream is stereo; before the duck its entry may have kept no volume.
        var entry = original
        entry["channels"] = ["front-left", "front-right"]
        entry["volume"] = [32768, 32768]
        try await write(entry)
        let set = try await restoreRecord(world)
        // Past the last late rewrite (3 s after the stream's end): a rewrite is what this looks for.
        try await Task.sleep(for: .seconds(3.5))
        let kept = try await restoreRecord(world)
        #expect(kept == set && set.contains("32768"), "the user's volume was replaced: \(set), then \(kept)")
        try await write(original)
    }

    /// PulseAudio started with `-n` has no module-stream-restore; a desktop's has. Loaded at run time, as
    /// the default configuration does.
    static func ensureStreamRestore(_ server: OtherAudioServer) async throws {
        guard server.kind == .pulseAudio else { return }
        let out = server.directory + "/modules.txt"
        unlink(out)
        let child = try server.start(["pactl", "list", "modules", "short"], stdout: out)
        guard await child.status(within: 10) == 0 else { throw HarnessError("pactl list modules failed") }
        let modules = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        if !modules.contains("module-stream-restore") {
            try await server.pactl(["load-module", "module-stream-restore"])
        }
    }

    /// The player's stream ends while announce has it lowered (with the daemon running, or killed with
    /// SIGKILL first and started again); then the same player starts again: at its volume of before
    /// the duck, and the restore database holds what it held before.
    static func endedWhileLowered(killed: Bool) async throws {
        guard let server = OtherAudioServerTrait.current else { throw HarnessError("no sound server") }
        try await ensureStreamRestore(server)
        try await withWorld(killed ? "ended-killed" : "ended") { world in
            // Before: the database has the player's entry (WirePlumber saves a second after the stream appears).
            let before = try await waitForRecord(world, timeout: 5) { record in
                world.server.kind == .pulseAudio ? record != "null" : record.contains("channelVolumes")
            }
            PacedAudio.report("restore database on \(server.kind.rawValue) before the duck: \(before)")
            let daemon = try await startLongDuck(world)
            let during = try await waitForRecord(world, timeout: 5) { $0 != before }
            #expect(during != before, "the server did not save the lowered volume; nothing for announce to put back")
            if killed {
                daemon.signal(SIGKILL)
                #expect(await daemon.waitForExit(timeout: 5), "the daemon survived SIGKILL")
            }
            world.other.stop()
            var gone = false
            for _ in 0..<500 where !gone {
                gone = try await otherVolume(world) == nil
                if !gone { try await Task.sleep(for: .milliseconds(10)) }
            }
            try #require(gone, "the player's stream did not end")
            if killed {
                // Paused, the item the spool kept does not play (and duck) again: only the journal's work is seen.
                try await world.runtime.control("pause")
                try await world.runtime.startDaemon(device: "pulse", arguments: ["--idle-exit", "60s"])
                var journal = true
                for _ in 0..<300 where journal {
                    journal = FileManager.default.fileExists(atPath: world.runtime.path + "/ducked-others")
                    if journal { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(!journal, "the next daemon did not restore from its journal within 3 s")
            } else {
                var streams: Int?
                for _ in 0..<200 where streams != 0 {
                    streams = try await world.runtime.status().otherAudio?.streams
                    if streams != 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(streams == 0, "announce still counts \(String(describing: streams)) lowered stream(s)")
                try await world.runtime.control("stop")
            }
            let after = try await waitForRecord(world, timeout: 5) { $0 == before }
            #expect(after == before, "the restore database after the duck: \(after); before: \(before)")
            if server.kind == .pulseAudio && !killed { try await userVolumeStays(world, before: before) }
            // The application's next stream, after the duck.
            var state: String?
            for _ in 0..<200 where state != "idle" {
                state = try await world.runtime.status().otherAudio?.state
                if state != "idle" { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(state == "idle", "the duck did not end: \(String(describing: state))")
            let again = try server.startTone(
                client: world.otherName, frequency: 440, output: world.directory + "/again.out")
            defer { again.stop() }
            let first = try await waitForOtherStream(server, name: world.otherName)
            // WirePlumber sets a restored volume just after the stream appears: look again a second later.
            try await Task.sleep(for: .seconds(1))
            let settled = try await otherVolume(world)
            PacedAudio.report(
                "duck others on \(server.kind.rawValue), a stream that ended while lowered"
                    + "\(killed ? " (daemon killed)" : ""): the player's next stream starts at \(first), then \(String(describing: settled))"
            )
            #expect(
                first == world.original && settled == world.original,
                "the player's next stream: \(first), then \(String(describing: settled)); before the duck \(world.original)"
            )
        }
    }
}
