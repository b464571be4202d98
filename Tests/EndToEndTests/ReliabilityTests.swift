import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a crash, a stopped daemon or a hostile file name leaves behind (issue 11 §6), end to
/// end on the built debug binary: a crash is injected between two spool writes, a daemon is
/// stopped with SIGSTOP (and always continued), and daemon.log is read back.
@Suite("Reliability", .serialized)
struct ReliabilityTests {
    /// Waits (on a deadline, checking as the log grows) for a line of `log` containing `text`.
    private func logLine(_ text: String, in log: @escaping () -> [String], timeout: Double = 10) async throws -> String
    {
        let deadline = monotonicNow() + timeout
        while monotonicNow() < deadline {
            if let line = log().first(where: { $0.contains(text) }) { return line }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        throw HarnessError("no log line containing \(text.debugDescription) within \(timeout) s: \(log())")
    }

    @Test(
        "a daemon killed between two items' spool writes keeps none of that request; the client sends it again to the daemon it starts, which queues it once"
    )
    func halfARequestDoesNotSurviveACrash() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("half"))
            let first = try await runtime.startDaemon(device: device)
            try await runtime.control("pause")
            let earlier = try await runtime.announce(["play", "--no-wait", "-d", device, try Tones.clip(300)])
            try #require(earlier.status == 0, "\(earlier)")
            // The injected crash (debug builds): a new daemon SIGKILLs itself after its 2nd item write.
            first.signal(SIGTERM)
            #expect(await first.waitForExit(timeout: 10))
            let crashing = try await runtime.startDaemon(
                device: device, environment: ["ANNOUNCE_TEST_KILL_AFTER_SPOOL_WRITES": "2"])
            let clips = [try Tones.clip(400), try Tones.clip(500), try Tones.clip(600)]
            let play = try await runtime.announce(["play", "--no-wait", "-d", device] + clips)
            #expect(await crashing.waitForExit(timeout: 10))
            #expect(crashing.terminatingSignal == SIGKILL, "\(crashing.child.endDescription)")
            #expect(play.status == 0 && play.stderr.isEmpty, "sent again to the daemon the client started: \(play)")

            let status = try await runtime.status()
            #expect(status.pid == runtime.lockPID && status.pid != crashing.pid)
            #expect(
                status.queued.map(\.path) == [try Tones.clip(300)] + clips,
                "the earlier item, then the request once: \(status.queued.map(\.path))")
            let ids = [earlier.stdout, play.stdout].flatMap { $0.split(separator: "\n").map(String.init) }
            #expect(status.queued.map(\.id) == ids, "\(status.queued.map(\.id)) \(ids)")
            let log = runtime.daemonLogLines()
            #expect(
                log.contains {
                    $0.contains("discarded 2 of 3 item(s) of a request interrupted before it was accepted")
                }, "\(log)")
            #expect(
                !log.contains { $0.contains("sent again") }, "nothing of it was restored, so it was queued anew: \(log)"
            )
        }
    }

    @Test(
        "a daemon killed between accepting a request and answering it: the client sends it again under its key, the next daemon answers with the items it restored, and each plays once"
    )
    func aRequestAcceptedByADyingDaemonPlaysOnce() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("commit"))
            let dying = try await runtime.startDaemon(
                device: device, environment: ["ANNOUNCE_TEST_KILL_AT_COMMIT": "1"])
            let clips = [
                try Tones.clip(400, seconds: 0.1), try Tones.clip(500, seconds: 0.1), try Tones.clip(600, seconds: 0.1)
            ]
            let play = try await runtime.announce(["play", "--json", "-d", device] + clips)
            #expect(await dying.waitForExit(timeout: 10))
            #expect(dying.terminatingSignal == SIGKILL, "\(dying.child.endDescription)")
            #expect(play.status == 0 && play.stderr.isEmpty, "\(play)")
            // The answer to the resend pairs each id with its file: each outcome names its own.
            let outcomes = try play.stdout.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary, "\(line)")
            }
            #expect(outcomes.map { $0["path"] as? String } == clips, "\(play.stdout)")
            #expect(
                outcomes.allSatisfy { ($0["outcome"] as? NSDictionary)?["kind"] as? String == "played" },
                "\(play.stdout)")

            let log = runtime.daemonLogLines()
            #expect(log.contains { $0.hasSuffix("restored 3 item(s) from \(runtime.spoolPath)") }, "\(log)")
            #expect(
                log.contains { $0.contains("a play request sent again after a restart: its 3 item(s) were restored") },
                "\(log)")
            for clip in clips {
                #expect(log.filter { $0.hasSuffix("\(clip): played") }.count == 1, "\(clip) plays once: \(log)")
            }
            #expect(runtime.spoolEntries().filter { $0.hasSuffix(".json") }.isEmpty, "\(runtime.spoolEntries())")
        }
    }

    @Test(
        "a stopped daemon: status, play, alert and pause exit 69 within seconds naming its pid; what they asked for is never done"
    )
    func aStoppedDaemonFailsClientsClearly() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("stopped")
            let daemon = try await runtime.startDaemon(device: Harness.fileDevice(capture))
            daemon.signal(SIGSTOP)
            let status = try await runtime.announce(["status"], killAfter: 20)
            let play = try await runtime.announce(["play", try Tones.clip(440)], killAfter: 20)
            let alert = try await runtime.announce(["alert", try Tones.clip(550)], killAfter: 20)
            let pause = try await runtime.announce(["pause"], killAfter: 20)
            daemon.signal(SIGCONT)
            for (name, result) in [("status", status), ("play", play), ("alert", alert), ("pause", pause)] {
                #expect(result.status == 69 && result.signal == nil, "\(name): \(result)")
                #expect(
                    result.stderrLines == [
                        "announce: the daemon (pid \(daemon.pid)) does not answer on \(runtime.socketPath): it is stopped (kill -CONT \(daemon.pid) lets it go on)"
                    ],
                    "\(name): \(result)")
            }
            // Continued, the daemon reads the requests their clients gave up on, and drops them.
            for op in ["play", "alert", "pause"] {
                _ = try await logLine(
                    "dropped the \(op) request of a client that already left",
                    in: { daemon.log.split(separator: "\n").map(String.init) })
            }
            let after = try await runtime.status()
            #expect(after.playing == nil && after.queued.isEmpty && !after.paused, "\(after)")
            #expect(!daemon.log.contains(": played"), "nothing may play: \(daemon.log)")
        }
    }

    @Test("a wedged daemon (takes connections, never answers): status exits 69 after ANNOUNCE_TIMEOUT, naming its pid")
    func aWedgedDaemonTimesOut() async throws {
        try await withDaemonRuntime { runtime in
            // The wedged "daemon" is this test process: a listener nobody accepts from, and its pid in daemon.lock.
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(listener) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: Array(runtime.socketPath.utf8))
                raw[runtime.socketPath.utf8.count] = 0
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0 && listen(listener, 16) == 0, "\(String(cString: strerror(errno)))")
            try "\(getpid())\n".write(toFile: runtime.path + "/daemon.lock", atomically: true, encoding: .utf8)
            defer { unlink(runtime.path + "/daemon.lock") }  // no cleanup may take this process for a daemon
            let result = try await runtime.announce(["status"], environment: ["ANNOUNCE_TIMEOUT": "0.5"])
            #expect(result.status == 69 && result.stderrLines.count == 1, "\(result)")
            #expect(
                result.stderr.hasPrefix(
                    "announce: the daemon (pid \(getpid())) does not answer on \(runtime.socketPath): nothing for")
                    && result.stderr.contains("(ANNOUNCE_TIMEOUT)"), "\(result)")
        }
    }

    @Test("after a SIGKILL, status and cancel find the spooled item: a daemon is started, takes it back and cancels it")
    func commandsAfterAKilledDaemonSeeItsSpool() async throws {
        try await withDaemonRuntime { runtime in
            let queued = try await runtime.announce(
                ["play", "--no-wait", "--loops", "-1", "-d", "null", try Tones.clip(440, seconds: 0.2)])
            try #require(queued.status == 0, "\(queued)")
            let id = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let killed = try #require(runtime.lockPID)
            kill(killed, SIGKILL)
            try #require(await runtime.waitForLockRelease(timeout: 5))
            #expect(FileManager.default.fileExists(atPath: runtime.spoolPath + "/\(id).json"))
            // Not "no daemon running; nothing is queued": the spool says otherwise.
            let status = try await runtime.status()
            #expect(
                status.pid != killed && (status.playing?.id == id || status.queued.contains { $0.id == id }),
                "\(status)")
            let cancel = try await runtime.announce(["cancel", id])
            #expect(cancel.status == 0 && cancel.stderr.isEmpty, "\(cancel)")
            let after = try await runtime.status()
            #expect(after.playing == nil && after.queued.isEmpty, "\(after)")
        }
    }

    @Test("a waiting play keeps waiting while the daemon answers, and exits 69 once it is stopped, its item cancelled")
    func aWaitingPlayTellsAliveFromStopped() async throws {
        try await withDaemonRuntime { runtime in
            let daemon = try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("waiting")))
            try await runtime.control("pause")
            // A liveness check after each second of silence: 3.5 s of waiting is 3 of them, each answered.
            let environment = runtime.environment.merging(["ANNOUNCE_TIMEOUT": "1"]) { $1 }
            let alive = try await Runner.announce(
                ["play", try Tones.clip(440)], environment: environment, killAfter: 3.5)
            #expect(alive.signal == SIGKILL, "still waiting when killed: \(alive)")

            let events = try await runtime.subscribe()
            let waiting = Task {
                try await Runner.announce(["play", try Tones.clip(550)], environment: environment, killAfter: 20)
            }
            _ = try await offPool { try events.events { $0.event == "queued" && $0.path == (try? Tones.clip(550)) } }
            // The queued event goes out just before the play's reply: one more round trip makes sure
            // the reply is on its way (a client without its ids has nothing to cancel; see the next test).
            _ = try await runtime.status()
            daemon.signal(SIGSTOP)
            let stopped = try await waiting.value
            daemon.signal(SIGCONT)
            #expect(stopped.status == 69 && stopped.signal == nil, "\(stopped)")
            #expect(stopped.stderr.contains("the daemon (pid \(daemon.pid)) does not answer"), "\(stopped)")
            // The client that gave up left a cancel behind: its item does not play later.
            let clip = try Tones.clip(550)
            let seen: [WireEvent]
            do {
                seen = try await offPool { try events.events { $0.event == "finished" && $0.path == clip } }
            } catch {
                let state =
                    (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8))?
                    .split(separator: "\n").first { $0.hasPrefix("State") } ?? "?"
                throw HarnessError("\(error); the play: \(stopped); the daemon (\(state)) logged: \(daemon.log)")
            }
            #expect(seen.last?.outcome?.kind == "cancelled", "\(seen)")
        }
    }

    @Test(
        "a daemon frozen between two items' spool writes: the client exits 69 and, continued, the daemon undoes the request"
    )
    func aRequestWhoseClientLeftIsUndone() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("undone")
            // The injected fault (debug builds): the daemon SIGSTOPs itself after its 2nd item write.
            let daemon = try await runtime.startDaemon(
                device: Harness.fileDevice(capture),
                environment: ["ANNOUNCE_TEST_STOP_AFTER_SPOOL_WRITES": "2"])
            defer { daemon.signal(SIGCONT) }
            try await runtime.control("pause")
            let clips = [try Tones.clip(400), try Tones.clip(500), try Tones.clip(600)]
            let play = try await runtime.announce(["play"] + clips, killAfter: 20)
            #expect(play.status == 69 && play.stderr.contains("it is stopped"), "\(play)")
            daemon.signal(SIGCONT)
            _ = try await logLine(
                "a play request whose client left before it was accepted is undone",
                in: { daemon.log.split(separator: "\n").map(String.init) })
            let status = try await runtime.status()
            #expect(status.playing == nil && status.queued.isEmpty, "\(status)")
            #expect(runtime.spoolEntries().isEmpty, "\(runtime.spoolEntries())")
            #expect(daemon.log.components(separatedBy: ": cancelled").count - 1 == 3, "\(daemon.log)")
        }
    }

    @Test("a file name with a newline cannot forge a daemon.log line: control characters are escaped")
    func fileNamesAreEscapedInTheLog() async throws {
        try await withDaemonRuntime { runtime in
            let directory = try Harness.workResult.get().appendingPathComponent("odd-names").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let forged = "2026-01-01T00:00:00.000Z [1] info: forged"
            let path = directory + "/a\n\(forged)\u{1b}[2J\\.wav"
            unlink(path)
            try FileManager.default.copyItem(atPath: try Tones.clip(440), toPath: path)
            defer { unlink(path) }
            let daemon = try await runtime.startDaemon(device: Harness.fileDevice(try Harness.capturePath("odd")))
            let played = try await runtime.announce(["play", path])
            #expect(played.status == 0, "\(played)")
            let lines = daemon.log.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(!lines.contains { $0.hasPrefix(forged) }, "a forged line: \(lines)")
            #expect(!daemon.log.contains("\u{1b}"), "a raw escape character in the log")
            let escaped = directory + "/a\\n\(forged)\\x1b[2J\\\\.wav: played"
            #expect(lines.contains { $0.hasSuffix(escaped) }, "\(lines)")
        }
    }

    @Test("a relative ANNOUNCE_RUNTIME_DIR is a usage error (64); a symlinked one is called a symlink (69)")
    func runtimeDirectoryMistakesAreNamed() async throws {
        for command in [["status"], ["play", try Tones.clip(440)], ["daemon", "--device", "null"]] {
            let relative = try await Runner.announce(command, environment: ["ANNOUNCE_RUNTIME_DIR": "run/announce"])
            #expect(
                relative.status == 64
                    && relative.stderrLines == [
                        "announce: ANNOUNCE_RUNTIME_DIR must be an absolute path, not 'run/announce'"
                    ],
                "\(command[0]): \(relative)")
        }
        try await withDaemonRuntime { runtime in
            let link = runtime.path + "-link"
            unlink(link)
            try #require(symlink(runtime.path, link) == 0)
            defer { unlink(link) }
            let linked = try await Runner.announce(["status"], environment: ["ANNOUNCE_RUNTIME_DIR": link])
            #expect(
                linked.status == 69
                    && linked.stderrLines == [
                        "announce: runtime directory \(link) is a symlink, not a directory; refusing to use it (set ANNOUNCE_RUNTIME_DIR to a private directory of yours)"
                    ],
                "\(linked)")
        }
    }

    @Test(
        "another user squatting /tmp/announce-UID: plays go on from ~/.cache/announce/run-HOST, with one warning once",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to play as an unprivileged user"))
    func aSquattedTmpDirectoryDoesNotBlock() async throws {
        let uid = 61003  // no XDG_RUNTIME_DIR and no /run/user/UID: /tmp/announce-UID is its default
        let squat = "/tmp/announce-\(uid)"
        var info = stat()
        try #require(
            lstat(squat, &info) != 0 && lstat("/run/user/\(uid)", &info) != 0,
            "\(squat) or /run/user/\(uid) exists already; this test leaves them alone")
        // Root's FIFO: to uid 61003, another user's.
        try #require(mkfifo(squat, 0o666) == 0)
        defer { unlink(squat) }
        let home = try Harness.workResult.get().appendingPathComponent("home-\(uid)").path
        try? FileManager.default.removeItem(atPath: home)
        try #require(mkdir(home, 0o700) == 0 && chown(home, uid_t(uid), gid_t(uid)) == 0)
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        let fallback = home + "/.cache/announce/run-" + String(cString: host)
        defer {
            // The daemon our play auto-started (it would exit when idle).
            if let pid = Harness.daemonPID(runtime: fallback) { kill(pid, SIGTERM) }
            try? FileManager.default.removeItem(atPath: home)
        }
        let capture = home + "/capture.wav"
        let command = [
            "/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups",
            try Harness.sharedBinaryResult.get(), "play", "-d", Harness.fileDevice(capture), try Tones.clip(440)
        ]
        let environment: [String: String?] = ["ANNOUNCE_RUNTIME_DIR": nil, "XDG_RUNTIME_DIR": nil, "HOME": home]
        let first = try await Runner.run(command[0], Array(command.dropFirst()), environment: environment)
        #expect(first.status == 0, "\(first)")
        #expect(
            first.stderrLines == [
                "announce: warning: runtime directory \(squat) is taken by uid 0; using \(fallback) instead"
            ],
            "\(first)")
        let second = try await Runner.run(command[0], Array(command.dropFirst()), environment: environment)
        #expect(second.status == 0 && second.stderr.isEmpty, "the fallback is found again, silently: \(second)")
        #expect(lstat(fallback + "/socket", &info) == 0 && info.st_uid == uid_t(uid))
        let frames = try await Runner.run("/usr/bin/soxi", ["-s", capture])
        #expect(
            frames.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "14400", "sox reads the capture: \(frames)"
        )
    }

    /// A real full disk under the runtime directory: a 256 KiB tmpfs, filled once the daemon runs.
    @Test(
        "a full disk: play and quiet on exit 69 with one line saying so, the queue keeps its items, and space coming back is enough",
        .enabled(if: getuid() == 0, "needs root to mount a small tmpfs (skipped: not root)"))
    func aFullDiskRefusesClearlyAndLosesNothing() async throws {
        let mountPoint = try Harness.workResult.get().path + "/full-\(getpid())"
        mkdir(mountPoint, 0o700)
        try #require(
            mount("tmpfs", mountPoint, "tmpfs", 0, "size=256k,mode=0700") == 0,
            "mount tmpfs: \(String(cString: strerror(errno)))")
        defer {
            umount2(mountPoint, Int32(MNT_DETACH))
            rmdir(mountPoint)
        }
        let runtime = try DaemonRuntime(path: mountPoint + "/rt")
        do {
            _ = try await runtime.startDaemon(device: "null")
            try await runtime.control("pause")
            let kept = try await runtime.announce(["play", "--no-wait", try Tones.clip(300)])
            try #require(kept.status == 0, "\(kept)")
            let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o600)
            defer { close(filler) }
            let block = [UInt8](repeating: 0, count: 4096)
            while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
            while block.withUnsafeBytes({ write(filler, $0.baseAddress, 1) }) > 0 {}

            let refused = try await runtime.announce(["play", "--no-wait", try Tones.clip(400), try Tones.clip(500)])
            #expect(refused.status == 69, "\(refused)")
            #expect(refused.stderrLines.count == 1 && refused.stderr.contains("No space left on device"), "\(refused)")
            #expect(
                try await runtime.status().queued.map(\.path) == [try Tones.clip(300)],
                "nothing lost, nothing half-queued")
            let quiet = try await runtime.announce(["quiet", "on"])
            #expect(
                quiet.status == 69 && quiet.stderrLines.count == 1 && quiet.stderr.contains("No space left on device"),
                "\(quiet)")
            #expect(try await runtime.status().quiet != true, "a switch a restart would forget is not taken")

            ftruncate(filler, 0)
            let again = try await runtime.announce(["play", "--no-wait", try Tones.clip(400)])
            #expect(again.status == 0, "\(again)")
            #expect(try await runtime.status().queued.map(\.path) == [try Tones.clip(300), try Tones.clip(400)])
            try await runtime.control("stop")
        } catch {
            await runtime.cleanup()
            throw error
        }
        await runtime.cleanup()
    }

    @Test("ANNOUNCE_TIMEOUT that is no duration above 0 is a usage error naming it, not a silent 30 s")
    func aBadTimeoutIsAUsageError() async throws {
        for value in ["abc", "0", "-1"] {
            let result = try await Runner.announce(["status"], environment: ["ANNOUNCE_TIMEOUT": value])
            #expect(
                result.status == 64 && result.stderrLines.count == 1
                    && result.stderr.hasPrefix("announce: ANNOUNCE_TIMEOUT=\(value): "), "\(value): \(result)")
        }
        let fine = try await Runner.announce(["status"], environment: ["ANNOUNCE_TIMEOUT": "1m30s"])
        #expect(fine.status == 0, "\(fine)")
    }
}
