import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon end to end: the built binary, a private runtime directory per test, ALSA's
/// unpaced `file:` device. Nothing waits on a timer: tests wait on process exits, socket
/// answers and event streams (DaemonHarness.swift).
@Suite("Daemon", .serialized)
struct DaemonTests {
    // MARK: helpers

    /// The ids `play --no-wait` printed, one per line.
    private func ids(_ outcome: Outcome) -> [String] {
        outcome.stdout.split(separator: "\n").map(String.init)
    }

    /// `announce play --no-wait ARGS...`; the ids, after checking it exited 0.
    private func enqueue(
        _ runtime: DaemonRuntime, _ arguments: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
        let result = try await runtime.announce(["play", "--no-wait"] + arguments)
        try #require(result.status == 0, "play --no-wait \(arguments): \(result)", sourceLocation: sourceLocation)
        return ids(result)
    }

    /// Runs `announce ARGS...` in the background (e.g. a blocking `play`).
    private func background(_ runtime: DaemonRuntime, _ arguments: [String]) -> Task<Outcome, any Error> {
        Task { try await runtime.announce(arguments) }
    }

    /// Waits on `events` for a `queued` event of `path`; its id.
    private func queuedID(of path: String, on events: SocketClient) async throws -> String {
        let seen = try await offPool { try events.events { $0.event == "queued" && $0.path == path } }
        return try #require(seen.last?.id)
    }

    // MARK: 1. queue order

    @Test("priority order, FIFO within a priority, on one per-item file device")
    func queueOrder() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("daemon-order")
            let device = Harness.fileDevice(capture)
            // The daemon's own device is another file: no item may land there.
            let unused = try Harness.capturePath("daemon-order-default")
            let daemon = try await runtime.startDaemon(device: Harness.fileDevice(unused))
            try await runtime.control("pause")

            let plan: [(tone: Int, priority: String)] = [
                (200, "low"), (300, "normal"), (400, "high"), (500, "critical"), (600, "normal"), (700, "normal")
            ]
            var ids: [String] = []
            for step in plan {
                let id = try await enqueue(
                    runtime, ["--priority", step.priority, "-d", device, try Tones.clip(step.tone)])
                try #require(id.count == 1)
                ids += id
            }
            let byTone = Dictionary(uniqueKeysWithValues: zip(plan.map(\.tone), ids))
            let expected = [500, 400, 300, 600, 700, 200]
            let status = try await runtime.status()
            #expect(status.paused)
            #expect(status.playing == nil)
            #expect(status.queued.map(\.id) == expected.map { byTone[$0]! }, "queue --json lists play order")

            // Wait for every item over the protocol, then let the queue go.
            let waiter = try runtime.client()
            let idList = ids.map { "\"\($0)\"" }.joined(separator: ",")
            let reply = try await offPool { try waiter.call(#"{"v":1,"op":"wait","ids":[\#(idList)]}"#) }
            #expect(reply.ok && Set(reply.ids ?? []) == Set(ids), "wait: \(reply)")
            try await runtime.control("resume")
            let total = ids.count
            let events = try await offPool {
                var count = 0
                return try waiter.events { event in
                    if event.event == "finished" { count += 1 }
                    return count == total
                }
            }
            let finished = events.filter { $0.event == "finished" }
            #expect(finished.map(\.id) == expected.map { byTone[$0] }, "finished in play order")
            #expect(finished.allSatisfy { $0.outcome?.kind == "played" }, "\(finished.map { $0.outcome?.kind ?? "-" })")
            #expect(finished.allSatisfy { $0.device == device })

            // SIGTERM: a clean exit, and the capture is complete.
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit(timeout: 10), "daemon did not exit on SIGTERM")
            #expect(daemon.exitStatus == 0, "\(daemon.child.endDescription): \(daemon.log)")
            // A kernel-side PCM (not a sound server's plugin): the short periods.
            #expect(daemon.log.contains(", 4 periods of 20 ms"), "the device's buffering: \(daemon.log)")
            let heard = try Tones.heardOrder(capture: capture, candidates: plan.map { Double($0.tone) })
            #expect(heard == expected.map(Double.init), "tones heard in the capture")
            #expect(try WAVCapture.audioBytes(atPath: unused) == 0, "nothing may play on the daemon's own device")
        }
    }

    // MARK: 2. outcomes and exit codes

    @Test("cancel ID: the waiting play exits 75, cancelled")
    func cancelQueued() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("cancel"))
            try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let events = try await runtime.subscribe()
            let clip = try Tones.clip(440)
            let play = background(runtime, ["play", clip])
            let id = try await queuedID(of: clip, on: events)
            try await runtime.control("cancel", id)
            let result = try await play.value
            #expect(result.status == 75, "\(result)")
            // The queue was paused when it was played: it said so, then why it ended.
            #expect(
                result.stderrLines.count == 2 && result.stderrLines[0].contains("the queue is paused")
                    && result.stderrLines[1].contains("cancelled"), "\(result)")
            #expect(try await runtime.status().queued.isEmpty)
            #expect(runtime.spoolEntries().isEmpty, "spool: \(runtime.spoolEntries())")
            // The id is final now: a second cancel says so.
            let again = try await runtime.announce(["cancel", id])
            #expect(again.status == 75 && again.stderr.contains(id), "\(again)")
        }
    }

    @Test("--tag --replace: the older waiting play exits 75, replaced")
    func replaceByTag() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("replace"))
            try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let events = try await runtime.subscribe()
            let older = try Tones.clip(440)
            let play = background(runtime, ["play", "--tag", "build", older])
            let oldID = try await queuedID(of: older, on: events)
            let newIDs = try await enqueue(runtime, ["--tag", "build", "--replace", try Tones.clip(550)])
            let result = try await play.value
            #expect(result.status == 75, "\(result)")
            // The queue was paused when it was played: it said so, then why it ended.
            #expect(
                result.stderrLines.count == 2 && result.stderrLines[0].contains("the queue is paused")
                    && result.stderrLines[1].contains("replaced"), "\(result)")
            let status = try await runtime.status()
            #expect(status.queued.map(\.id) == newIDs, "only the newest message is left")
            #expect(!status.queued.map(\.id).contains(oldID))
        }
    }

    @Test("--tag --replace with several files: files of one request do not replace each other")
    func replaceWithSeveralFiles() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("replace-several")
            try await runtime.startDaemon(
                device: Harness.fileDevice(try Harness.capturePath("replace-several-default")))
            try await runtime.control("pause")
            // An older message with the tag, waiting: the one to replace.
            let older = try await enqueue(runtime, ["--tag", "status", try Tones.clip(300)])
            let newer = try await enqueue(
                runtime,
                [
                    "--tag", "status", "--replace", "-d", Harness.fileDevice(capture),
                    try Tones.clip(440), try Tones.clip(550)
                ])
            try #require(newer.count == 2)
            let status = try await runtime.status()
            #expect(
                status.queued.map(\.id) == newer,
                "both files of the newest message wait; the older one (\(older)) is gone")

            let waiter = try runtime.client()
            let reply = try await offPool {
                try waiter.call(#"{"v":1,"op":"wait","ids":["\#(newer[0])","\#(newer[1])"]}"#)
            }
            #expect(reply.ok)
            try await runtime.control("resume")
            let finished = try await offPool {
                var done = Set<String>()
                return try waiter.events { event in
                    if event.event == "finished", let id = event.id { done.insert(id) }
                    return done.count == 2
                }
            }.filter { $0.event == "finished" }
            #expect(
                finished.map { $0.outcome?.kind } == ["played", "played"],
                "\(finished.map { "\($0.id ?? "") \($0.outcome?.kind ?? "") \($0.reason ?? "")" })")
            let heard = try Tones.heardOrder(capture: capture, candidates: [300, 440, 550])
            #expect(heard == [440, 550], "both files of the newest message play")
        }
    }

    @Test("--expire while paused: the play exits 75, expired", arguments: ["0s", "300ms"])
    func expireWhilePaused(_ expire: String) async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("expire"))
            try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            // Bounded: a play that is never told its outcome must fail the test, not hang it.
            let result = try await runtime.announce(["play", "--expire", expire, try Tones.clip(440)], killAfter: 5)
            #expect(result.status == 75, "\(result) (killed by signal 9 = still waiting after 5 s)")
            #expect(result.stderr.contains("expired"), "\(result)")
            #expect(try await runtime.status().queued.isEmpty)
        }
    }

    @Test("stop: every waiting play exits 75")
    func stopCancelsWaiting() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("stop"))
            try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let events = try await runtime.subscribe()
            let clips = [try Tones.clip(440), try Tones.clip(550), try Tones.clip(660)]
            var plays: [Task<Outcome, any Error>] = []
            for clip in clips {
                plays.append(background(runtime, ["play", clip]))
                _ = try await queuedID(of: clip, on: events)
            }
            try await runtime.control("stop")
            for play in plays {
                let result = try await play.value
                #expect(result.status == 75, "\(result)")
                // The queue was paused when it was played: it said so, then why it ended.
                #expect(
                    result.stderrLines.count == 2 && result.stderrLines[0].contains("the queue is paused")
                        && result.stderrLines[1].contains("cancelled"), "\(result)")
            }
            let status = try await runtime.status()
            #expect(status.queued.isEmpty && status.playing == nil)
        }
    }

    @Test("--no-wait prints the 12-hex-digit id; the spool holds exactly that item")
    func noWaitSpools() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("nowait"))
            try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let result = try await runtime.announce(["play", "--no-wait", try Tones.clip(440)])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
            let printed = ids(result)
            try #require(printed.count == 1, "\(result)")
            #expect(printed[0].isItemID, "id \(printed[0].debugDescription)")
            #expect(result.stdout == printed[0] + "\n")
            #expect(runtime.spoolEntries() == [printed[0] + ".json"])
            #expect(try await runtime.status().queued.map(\.id) == printed)
        }
    }

    @Test("--json prints the finished event: outcome played")
    func jsonOutcome() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("json")
            try await runtime.startDaemon(device: Harness.fileDevice(capture))
            let clip = try Tones.clip(440)
            let result = try await runtime.announce(["play", "--json", clip])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
            let lines = result.stdout.split(separator: "\n")
            try #require(lines.count == 1, "\(result)")
            let event = try JSONDecoder().decode(WireEvent.self, from: Data(lines[0].utf8))
            #expect(event.v == 1)
            #expect(event.event == "finished")
            #expect(event.outcome?.kind == "played")
            #expect(event.id?.isItemID == true)
            #expect(event.path == clip)
            #expect(runtime.spoolEntries().isEmpty, "a final item leaves the spool")
        }
    }

    // MARK: 3. concurrency

    @Test("100 clients × 10 items at once: 1000 queued, ids unique, 1000 spool files")
    func hundredClients() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("concurrent"))
            try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let clips = try (0..<10).map { try Tones.clip(1000 + 100 * $0, seconds: 0.05) }
            let results = try await HeavyLoad.exclusively {
                try await withThrowingTaskGroup(of: Outcome.self) { group in
                    for _ in 0..<100 {
                        group.addTask { try await runtime.announce(["play", "--no-wait"] + clips) }
                    }
                    return try await group.reduce(into: [Outcome]()) { $0.append($1) }
                }
            }
            let failures = results.filter { $0.status != 0 }
            #expect(
                failures.isEmpty, "\(failures.count) clients failed, e.g. \(failures.first.map(\.description) ?? "")")
            let perClient = results.map(ids)
            #expect(perClient.allSatisfy { $0.count == 10 })
            let all = perClient.flatMap { $0 }
            #expect(all.count == 1000)
            #expect(Set(all).count == 1000, "ids must be unique")
            #expect(all.allSatisfy { $0.isItemID })

            let status = try await runtime.status()
            let listed = status.queued.map(\.id)
            #expect(listed.count == 1000)
            #expect(Set(listed) == Set(all), "queue --json lists exactly the returned ids")
            // One request is one atomic batch: its items are consecutive in play order, in order.
            let position = Dictionary(uniqueKeysWithValues: listed.enumerated().map { ($1, $0) })
            for batch in perClient where batch.count == 10 {
                let places = batch.compactMap { position[$0] }
                #expect(
                    places.count == 10 && places == Array(places[0]..<places[0] + 10),
                    "batch \(batch[0]) not contiguous")
            }
            let spool = runtime.spoolEntries()
            #expect(spool.count == 1000, "spool has \(spool.count) entries")
            #expect(Set(spool) == Set(all.map { $0 + ".json" }))
        }
    }

    // MARK: 4. crash

    @Test("kill -9 and restart: the same 20 ids in the same order")
    func crashKeepsQueue() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("crash")
            let device = Harness.fileDevice(capture)
            let first = try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let priorities = ["normal", "low", "high", "normal", "critical"]
            var ids: [String] = []
            for index in 0..<20 {
                ids += try await enqueue(
                    runtime,
                    [
                        "--priority", priorities[index % priorities.count],
                        try Tones.clip(200 + 100 * index)
                    ])
            }
            let before = try await runtime.status().queued.map(\.id)
            #expect(Set(before) == Set(ids) && before.count == 20)
            #expect(runtime.lockPID == first.pid, "daemon.lock names the daemon")

            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: 10))
            #expect(first.terminatingSignal == SIGKILL, "\(first.child.endDescription)")
            #expect(runtime.spoolEntries().count == 20)

            let second = try await runtime.startDaemon(device: device)
            let after = try await runtime.status()
            #expect(after.pid == second.pid)
            #expect(after.playing == nil, "a paused queue must stay paused after a crash")
            #expect(after.paused, "a paused queue must stay paused after a crash")
            #expect(after.queued.map(\.id) == before, "restored queue")
        }
    }

    @Test("kill -9 and restart: the restored items play in the recorded order")
    func crashRestoredItemsPlayInOrder() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("crash-order")
            let device = Harness.fileDevice(capture)
            let first = try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let priorities = ["normal", "low", "high", "normal", "critical"]
            let tones = (0..<20).map { 300 + 100 * $0 }
            var toneOf: [String: Int] = [:]
            for (index, tone) in tones.enumerated() {
                let id = try await enqueue(
                    runtime,
                    [
                        "--priority", priorities[index % priorities.count],
                        "-d", device, try Tones.clip(tone)
                    ])
                toneOf[id[0]] = tone
            }
            let before = try await runtime.status().queued.map(\.id)
            try #require(before.count == 20)
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: 10))

            // The restarted daemon is still paused (the pause is spooled too): wait for the 20
            // outcomes over the protocol, then let it play.
            let unused = try Harness.capturePath("crash-order-default")
            let second = try await runtime.startDaemon(device: Harness.fileDevice(unused))
            #expect(try await runtime.status().paused, "a paused queue must stay paused after a crash")
            let waiter = try runtime.client()
            let idList = before.map { "\"\($0)\"" }.joined(separator: ",")
            let reply = try await offPool { try waiter.call(#"{"v":1,"op":"wait","ids":[\#(idList)]}"#) }
            #expect(reply.ok && (reply.unknown ?? []).isEmpty && Set(reply.ids ?? []) == Set(before), "wait: \(reply)")
            try await runtime.control("resume")
            let finished = try await offPool {
                var done = Set<String>()
                return try waiter.events { event in
                    if event.event == "finished", let id = event.id { done.insert(id) }
                    return done.count == before.count
                }
            }.filter { $0.event == "finished" }
            #expect(finished.allSatisfy { $0.outcome?.kind == "played" }, "\(finished.map { $0.outcome?.kind ?? "-" })")
            second.signal(SIGTERM)
            #expect(await second.waitForExit(timeout: 10))
            let heard = try Tones.heardOrder(capture: capture, candidates: tones.map(Double.init))
            #expect(heard == before.map { Double(toneOf[$0]!) }, "played in the order recorded before the crash")
            #expect(runtime.spoolEntries().isEmpty)
        }
    }

    @Test("a waiting play survives kill -9 of the daemon and exits 0 once resumed", arguments: 1...5)
    func waitingClientSurvivesCrash(_ attempt: Int) async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("survive"))
            let first = try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let events = try await runtime.subscribe()
            let clip = try Tones.clip(440)
            let play = background(runtime, ["play", "--json", "-d", device, clip])
            let id = try await queuedID(of: clip, on: events)
            // The queued event goes out just before the play's reply: one more round trip makes
            // sure the client has its id (killed in between, it could not know what to wait for).
            _ = try await runtime.status()

            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: 10))
            // The client reconnects and so starts a daemon by itself (daemon.log); events ends.
            _ = try? await offPool { try events.events { _ in false } }
            // Resume whichever daemon answers now (the restarted one), then the play ends.
            do {
                try await runtime.waitForDaemon { $0 != first.pid }
            } catch {
                let play = try? await play.value
                throw HarnessError("\(error); the play: \(play.map(\.description) ?? "-")")
            }
            try await runtime.control("resume")
            let result = try await play.value
            #expect(result.status == 0, "\(result)")
            // Played into a paused queue: a waiting (paused) line first, then the outcome.
            let lines = result.stdout.split(separator: "\n")
            let printed = lines.compactMap { try? JSONDecoder().decode(WireEvent.self, from: Data($0.utf8)) }
            let kinds = printed.map { $0.event }
            #expect(kinds == ["waiting", "finished"], "\(result)")
            let event = printed.last
            #expect(event?.id == id && event?.outcome?.kind == "played", "\(result)")
            #expect(
                runtime.daemonLogLines().filter { $0.contains("listening on") }.count == 1,
                "the client auto-started one daemon: \(runtime.daemonLogLines())")
            #expect(runtime.daemonLogLines().contains { $0.contains("restored 1 item") }, "\(runtime.daemonLogLines())")
        }
    }

    // MARK: 5. fifty auto-starts

    @Test("50 concurrent plays with no daemon: all succeed and exactly one daemon starts")
    func fiftyAutoStarts() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("autostart"))
            let clip = try Tones.clip(440, seconds: 0.05)
            #expect(!runtime.daemonLockHeld)
            let results = try await HeavyLoad.exclusively {
                try await withThrowingTaskGroup(of: Outcome.self) { group in
                    for _ in 0..<50 {
                        group.addTask { try await runtime.announce(["play", "--no-wait", "-d", device, clip]) }
                    }
                    return try await group.reduce(into: [Outcome]()) { $0.append($1) }
                }
            }
            let failures = results.filter { $0.status != 0 }
            #expect(failures.isEmpty, "\(failures.count) failed, e.g. \(failures.first.map(\.description) ?? "")")
            let all = results.flatMap(ids)
            #expect(all.count == 50 && Set(all).count == 50 && all.allSatisfy { $0.isItemID })
            let log = runtime.daemonLogLines()
            #expect(
                log.filter { $0.contains("listening on") }.count == 1, "daemon.log:\n\(log.joined(separator: "\n"))")
            #expect(
                !log.contains { $0.contains("another daemon") },
                "a second daemon was spawned:\n\(log.joined(separator: "\n"))")
            let pid = try #require(runtime.lockPID)
            #expect(runtime.daemonProcesses() == [pid], "announce daemon processes for this directory")
            #expect(try await runtime.status().pid == pid)
        }
    }

    @Test("the daemon's threads are named for top -H: announce-out per device, announce-play per play")
    func threadNames() async throws {
        try await withDaemonRuntime { runtime in
            let daemon = try await runtime.startDaemon(device: "null")
            let listener = try runtime.client()
            _ = try await offPool { try listener.call(#"{"v":1,"op":"events"}"#) }
            let bed = try await runtime.announce([
                "play", "--no-wait", "--category", "ambient", "--loops", "-1",
                try Tones.clip(440, seconds: 0.05)
            ])
            #expect(bed.status == 0, "\(bed)")
            let id = bed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            // Started: its decode thread and the device's thread run (each names itself first).
            _ = try await offPool { try listener.events(until: { $0.event == "started" && $0.id == id }) }
            let tasks = "/proc/\(daemon.pid)/task"
            let names = Set(
                try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { task in
                    (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8))?.trimmingCharacters(
                        in: .whitespacesAndNewlines)
                })
            try await runtime.control("cancel", id)
            #expect(
                names.isSuperset(of: ["announce", "announce-out", "announce-play", "announce-house"]),
                "\(names.sorted())")
        }
    }

    @Test("a 33rd stream on one device fails at once (69) saying so, and its client exits; the 32 play on")
    func thirtyThirdStream() async throws {
        try await withDaemonRuntime { runtime in
            // The daemon's own device is another: a play's finished event waits for its own
            // device to close, once it has written there.
            _ = try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("thirty-third")))
            let listener = try runtime.client()
            _ = try await offPool { try listener.call(#"{"v":1,"op":"events"}"#) }
            let bed = try Tones.clip(440, seconds: 0.05)
            let beds = try await runtime.announce(
                ["play", "--no-wait", "-q", "--category", "ambient", "--loops", "-1", "-d", "null"]
                    + Array(repeating: bed, count: 32))
            try #require(beds.status == 0, "\(beds)")
            _ = try await offPool {
                var started = 0
                return try listener.events(until: { event in
                    if event.event == "started" { started += 1 }
                    return started == 32
                })
            }
            // It wrote nothing on null, so nothing holds its finished event until null closes.
            let extra = try await runtime.announce(
                ["play", "--category", "ambient", "-d", "null", try Tones.clip(880)], killAfter: 20)
            #expect(
                extra.status == 69 && extra.stderrLines == ["announce: device 'null': 32 streams already play on it"],
                "\(extra)")
            #expect(try await runtime.status().mixing?.count == 32)
            try await runtime.control("stop")
        }
    }

    @Test("an auto-started daemon finding daemon.log past 1 MiB moves it to daemon.log.1 and logs anew")
    func logRotation() async throws {
        try await withDaemonRuntime { runtime in
            let old = String(repeating: "an old line\n", count: 90_000)  // 1.08 MB
            try old.write(toFile: runtime.daemonLogPath, atomically: false, encoding: .utf8)
            try "the previous rotation\n".write(
                toFile: runtime.daemonLogPath + ".1", atomically: false, encoding: .utf8)
            let played = try await runtime.announce(["play", "-d", "null", try Tones.clip(440, seconds: 0.05)])
            #expect(played.status == 0, "a play that starts the daemon: \(played)")
            let rotated = try String(contentsOfFile: runtime.daemonLogPath + ".1", encoding: .utf8)
            #expect(
                rotated == old,
                "daemon.log.1 holds the old log (\(rotated.utf8.count) bytes), replacing the previous one")
            let log = runtime.daemonLogLines()
            #expect(
                log.contains { $0.contains("listening on") } && !log.contains("an old line"),
                "daemon.log:\n\(log.joined(separator: "\n"))")

            // Grown past the limit while running (here by someone else's hand): rotated as an item ends.
            let handle = try #require(FileHandle(forWritingAtPath: runtime.daemonLogPath))
            handle.seekToEndOfFile()
            handle.write(Data(String(repeating: "a newer line\n", count: 90_000).utf8))
            try handle.close()
            let again = try await runtime.announce(["play", "-d", "null", try Tones.clip(440, seconds: 0.05)])
            #expect(again.status == 0, "\(again)")
            let rotatedAgain = try String(contentsOfFile: runtime.daemonLogPath + ".1", encoding: .utf8)
            #expect(
                rotatedAgain.contains("listening on") && rotatedAgain.contains("a newer line"),
                "daemon.log.1: the running daemon's log")
            // By the daemon that was running, as the item ended (not by a new one at its start).
            func pid(_ line: String?) -> Substring? {
                line?.split(separator: "[").dropFirst().first?.split(separator: "]").first
            }
            let goesOn = runtime.daemonLogLines().first { $0.contains("the log goes on from") }
            let listening = rotatedAgain.split(separator: "\n").map(String.init).first { $0.contains("listening on") }
            #expect(goesOn != nil && pid(goesOn) == pid(listening), "\(runtime.daemonLogLines())")
        }
    }

    // MARK: 6. bad protocol input

    struct BadLine: Sendable, CustomTestStringConvertible {
        var name: String
        var line: String
        var expected: String
        var testDescription: String { name }
    }

    static let badLines: [BadLine] = [
        BadLine(name: "not JSON", line: "hello, daemon", expected: "not valid JSON"),
        BadLine(name: "a JSON array", line: "[1,2,3]", expected: "malformed"),
        BadLine(name: "no version", line: #"{"op":"status"}"#, expected: "version"),
        BadLine(
            name: "unsupported version", line: #"{"v":99,"op":"status"}"#, expected: "unsupported protocol version 99"),
        BadLine(
            name: "wrong type", line: #"{"v":1,"op":"play","items":[{"clip":{"path":7}}]}"#,
            expected: "items[0].clip.path"),
        BadLine(name: "unknown op", line: #"{"v":1,"op":"nope"}"#, expected: "op"),
        BadLine(
            name: "relative path",
            line: #"{"v":1,"op":"play","items":[{"clip":{"path":"relative.wav","gain":1,"pan":0,"loops":0}}]}"#,
            expected: "absolute"),
        BadLine(name: "no items", line: #"{"v":1,"op":"play","items":[]}"#, expected: "at least one item"),
        BadLine(
            name: "NaN gain",
            line: #"{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav","gain":1e999,"pan":0,"loops":0}}]}"#,
            expected: "malformed"),
        BadLine(name: "cancel without ids", line: #"{"v":1,"op":"cancel"}"#, expected: "cancel needs")
    ]

    @Test("bad protocol lines get an error reply; the daemon lives on")
    func badProtocolInput() async throws {
        try await withDaemonRuntime { runtime in
            let daemon = try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("protocol")))
            for bad in Self.badLines {
                let client = try runtime.client()
                let reply = try await offPool { try client.call(bad.line) }
                #expect(reply.ok == false && reply.v == 1, "\(bad.name): \(reply)")
                #expect(reply.error?.code == 64, "\(bad.name): \(reply)")
                let message = reply.error?.message ?? ""
                #expect(message.localizedCaseInsensitiveContains(bad.expected), "\(bad.name): \(message)")
                // After an error reply the daemon closes the connection.
                let rest = try await offPool { try client.readLine(timeout: 5) }
                #expect(rest == nil, "\(bad.name): connection still open, read \(rest ?? "")")
            }
            #expect(daemon.isRunning)
            let status = try await runtime.announce(["status"])
            #expect(status.status == 0 && status.stdout.contains("pid \(daemon.pid)"), "\(status)")
        }
    }

    @Test("a 10 MB request line: an error reply, the connection closes, the daemon lives on")
    func oversizedLine() async throws {
        try await withDaemonRuntime { runtime in
            let daemon = try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("huge")))
            let client = try runtime.client()
            var huge = Array(#"{"v":1,"op":"status","pad":""#.utf8)
            huge += [UInt8](repeating: UInt8(ascii: "x"), count: 10 << 20)
            huge += Array("\"}\n".utf8)
            let payload = huge
            // Write from another thread; the daemon may close before taking it all (EPIPE).
            let writer = Task { try await offPool { client.write(payload) } }
            let line = try await offPool { try client.readLine(timeout: 20) }
            let writeError = try await writer.value
            #expect(
                writeError == 0 || writeError == EPIPE || writeError == ECONNRESET,
                "write: \(String(cString: strerror(writeError)))")
            let reply = try line.map { try WireMessage(line: $0) }
            guard case .reply(let reply)? = reply else {
                Issue.record("no reply to a 10 MB line: \(line?.prefix(200) ?? "connection closed")")
                return
            }
            #expect(
                !reply.ok && reply.error?.code == 64 && (reply.error?.message.contains("longer than") ?? false),
                "\(reply)")
            #expect(try await offPool { try client.readLine(timeout: 10) } == nil, "connection closed after the error")
            #expect(daemon.isRunning)
            let status = try await runtime.status()
            #expect(status.pid == daemon.pid)
            // And a normal client is served as before.
            let next = try runtime.client()
            let ok = try await offPool { try next.call(#"{"v":1,"op":"status"}"#) }
            #expect(ok.ok && ok.status?.pid == daemon.pid)
        }
    }

    @Test("two requests in one write: two replies, in order")
    func goodRequestsStillServed() async throws {
        try await withDaemonRuntime { runtime in
            let daemon = try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("pipeline")))
            let client = try runtime.client()
            // Two requests in one write: two replies, in order.
            let replies = try await offPool { () throws -> [WireReply] in
                try client.send(#"{"v":1,"op":"pause"}"# + "\n" + #"{"v":1,"op":"status"}"#)
                var replies: [WireReply] = []
                while replies.count < 2, let message = try client.next() {
                    if case .reply(let reply) = message { replies.append(reply) }
                }
                return replies
            }
            #expect(replies.count == 2 && replies.allSatisfy(\.ok))
            #expect(replies.last?.status?.paused == true && replies.last?.status?.pid == daemon.pid)
        }
    }

    // MARK: 7. runtime directory safety

    @Test("a runtime directory open to others is refused: 69, one line naming it")
    func runtimeDirectoryMode() async throws {
        try await withDaemonRuntime { runtime in
            chmod(runtime.path, 0o755)
            let result = try await runtime.announce(["play", try Tones.clip(440)])
            #expect(result.status == 69, "\(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains(runtime.path), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: runtime.socketPath), "no daemon may start there")
            #expect(!FileManager.default.fileExists(atPath: runtime.daemonLogPath))
        }
    }

    @Test(
        "a runtime directory owned by someone else is refused: 69",
        .enabled(if: getuid() == 0, "needs root to chown the directory"))
    func runtimeDirectoryOwner() async throws {
        try await withDaemonRuntime { runtime in
            #expect(chown(runtime.path, 65534, 65534) == 0)
            for command in [["play", try Tones.clip(440)], ["daemon", "--device", "null"]] {
                let result = try await runtime.announce(command)
                #expect(result.status == 69, "\(command[0]): \(result)")
                #expect(
                    result.stderrLines.count == 1 && result.stderr.contains(runtime.path)
                        && result.stderr.contains("owned by"), "\(command[0]): \(result)")
            }
            #expect(!FileManager.default.fileExists(atPath: runtime.socketPath))
            chown(runtime.path, getuid(), getgid())
        }
    }

    // MARK: 8. bad input is refused before anything is queued

    @Test("a missing file: 66, and no daemon was started")
    func missingFileStartsNoDaemon() async throws {
        try await withDaemonRuntime { runtime in
            let result = try await runtime.announce(["play", "/nonexistent.wav"])
            #expect(result.status == 66, "\(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains("/nonexistent.wav"), "\(result)")
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: runtime.path)) ?? []
            #expect(entries.isEmpty, "runtime directory: \(entries)")
            #expect(!runtime.daemonLockHeld)
        }
    }

    @Test("one bad file among good ones: nothing is queued")
    func badFileAmongGoodOnes() async throws {
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("bad-among")))
            try await runtime.control("pause")
            let result = try await runtime.announce(["play", "--no-wait", try Tones.clip(440), "/nonexistent.wav"])
            #expect(result.status == 66, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(try await runtime.status().queued.isEmpty)
            #expect(runtime.spoolEntries().isEmpty)
        }
    }
}
