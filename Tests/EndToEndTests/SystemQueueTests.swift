import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The machine's queue (`announce daemon --system`, DESIGN §8) as real users meet it: users
/// made with useradd, each command in that user's own login shell (runuser -l), the daemon
/// started as root and dropping to user announce. What was heard is checked with sox, who owns
/// what with Foundation's JSON parser, the permission cases by what the daemon answered and
/// what it queued. Root only (CI runs as root).
@Suite(
    "the system queue", .serialized,
    .enabled(
        if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")))
struct SystemQueueTests {
    static let member = "annc-member"
    static let outsider = "annc-outsider"

    @Test("a member plays a file only they can read, sample for sample; the daemon runs as announce")
    func memberPlaysTheirPrivateFile() async throws {
        let queue = try await SystemQueue.start()
        defer { queue.stop() }
        let clip = try queue.privateClip(of: Self.member, seconds: 0.5, frequency: 440)
        let played = try await queue.run(as: Self.member, ["play", clip])
        #expect(played.status == 0 && played.stderr.isEmpty, "\(played)")
        try await queue.expectCapture(equals: [clip])
        // Real, effective, saved and filesystem uid: announce's; the socket: group announce, 0660.
        let ids = try String(contentsOfFile: "/proc/\(queue.daemon.pid)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("Uid:") }?.split(whereSeparator: \.isWhitespace).dropFirst()
            .map(String.init)
        #expect(ids == Array(repeating: String(SystemQueue.daemonUser.uid), count: 4), "\(ids ?? [])")
        var socket = stat()
        #expect(stat(queue.directory + "/socket", &socket) == 0)
        #expect(socket.st_mode & 0o777 == 0o660 && socket.st_gid == SystemQueue.groupID)
    }

    @Test("a member's chimes, in their home, are handed over too: chime, clip, closing tone; media/ empty after")
    func chimesAreHandedToo() async throws {
        let queue = try await SystemQueue.start()
        defer { queue.stop() }
        let clip = try queue.privateClip(of: Self.member, seconds: 0.5, frequency: 440)
        let chime = try queue.privateClip(of: Self.member, seconds: 0.3, frequency: 880, name: "chime")
        let closing = try queue.privateClip(of: Self.member, seconds: 0.2, frequency: 660, name: "closing")
        let played = try await queue.run(as: Self.member, ["play", "--chime", chime, "--chime-after", closing, clip])
        #expect(played.status == 0, "\(played)")
        try await queue.expectCapture(equals: [chime, clip, closing])
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.directory + "/media").isEmpty)
    }

    @Test("an outsider gets one line and 77, also with -q; nothing is queued")
    func outsiderIsRefused() async throws {
        let queue = try await SystemQueue.start(paused: true)
        defer { queue.stop() }
        let clip = try queue.privateClip(of: Self.outsider, seconds: 0.2, frequency: 440)
        for quiet in [false, true] {
            let refused = try await queue.run(as: Self.outsider, ["play"] + (quiet ? ["-q"] : []) + [clip])
            #expect(refused.status == 77, "\(refused)")
            #expect(
                refused.stderrLines == [
                    "announce: not allowed to use the system queue: \(Self.outsider) is not in group 'announce'"
                ])
        }
        #expect((try await queue.status(as: nil)["queued"] as? [Any])?.isEmpty == true)
    }

    @Test("root's plain `announce play` reaches it, from a file and from stdin")
    func rootFindsItByItself() async throws {
        // Paused until both are queued: the file device starts over whenever it is opened again.
        let queue = try await SystemQueue.start(paused: true)
        defer { queue.stop() }
        let first = try queue.privateClip(of: nil, seconds: 0.3, frequency: 440)
        let second = try queue.privateClip(of: nil, seconds: 0.3, frequency: 660)
        let played = try await Runner.run(
            try Harness.binary(), ["play", "--no-wait", first], environment: queue.rootEnvironment)
        #expect(played.status == 0, "\(played)")
        let piped = try await Runner.run(
            try Harness.binary(), ["play", "--no-wait", "-"], environment: queue.rootEnvironment, stdin: second)
        #expect(piped.status == 0, "\(piped)")
        let resumed = try await Runner.run(try Harness.binary(), ["resume"], environment: queue.rootEnvironment)
        #expect(resumed.status == 0, "\(resumed)")
        try await queue.expectCapture(equals: [first, second])
    }

    @Test("owners in status, events and the spool; others' items private; only one's own to cancel; controls root's")
    func ownersAndPrivacy() async throws {
        let queue = try await SystemQueue.start(paused: true)
        defer { queue.stop() }
        let mine = try queue.privateClip(of: Self.member, seconds: 0.2, frequency: 440)
        let roots = try queue.privateClip(of: nil, seconds: 0.2, frequency: 660)
        let queued = try await queue.run(as: Self.member, ["play", "--no-wait", "--tag", "t", mine, mine])
        try #require(queued.status == 0, "\(queued)")
        let memberIDs = queued.stdout.split(separator: "\n").map(String.init)
        let rootQueued = try await Runner.run(
            try Harness.binary(), ["play", "--no-wait", "--tag", "t", roots], environment: queue.rootEnvironment)
        try #require(rootQueued.status == 0, "\(rootQueued)")
        let rootID = rootQueued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        // The member sees their own items whole and root's as owner, id, priority and state.
        let seen = try #require(try await queue.status(as: Self.member)["queued"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: seen.map { ($0["id"] as? String ?? "", $0) })
        #expect(byID[memberIDs[0]]?["path"] as? String == mine && byID[memberIDs[0]]?["tag"] as? String == "t")
        #expect((byID[memberIDs[0]]?["owner"] as? [String: Any])?["name"] as? String == Self.member)
        #expect(byID[rootID]?["path"] as? String == "(another user's)" && byID[rootID]?["tag"] == nil)
        #expect((byID[rootID]?["owner"] as? [String: Any])?["uid"] as? Int == 0)
        // Root sees all of it; the spool keeps each owner.
        let all = try #require(try await queue.status(as: nil)["queued"] as? [[String: Any]])
        #expect(all.first { $0["id"] as? String == rootID }?["path"] as? String == roots)
        let spooled = try FileManager.default.contentsOfDirectory(atPath: queue.directory + "/spool").filter {
            $0.hasSuffix(".json")
        }
        let owners = try spooled.map { name -> String in
            let entry =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: queue.directory + "/spool/" + name))) as? [String: Any]
            return (entry?["owner"] as? [String: Any])?["name"] as? String ?? "none"
        }
        #expect(owners.sorted() == [Self.member, Self.member, "root"], "\(spooled)")

        // Root's item and the controls are not the member's.
        let cancel = try await queue.run(as: Self.member, ["cancel", rootID])
        #expect(cancel.status == 77 && cancel.stderr.contains("is root's, not \(Self.member)'s"), "\(cancel)")
        for control in ["resume", "clear", "stop"] {
            let refused = try await queue.run(as: Self.member, [control])
            #expect(refused.status == 77 && refused.stderr.contains("\(control) is for root"), "\(refused)")
        }
        let quiet = try await queue.run(as: Self.member, ["quiet", "on"])
        #expect(quiet.status == 77, "\(quiet)")
        // A tag is its owner's: the member's cancel --tag t leaves root's t.
        let byTag = try await queue.run(as: Self.member, ["cancel", "--tag", "t"])
        #expect(byTag.status == 0, "\(byTag)")
        let left = try #require(try await queue.status(as: nil)["queued"] as? [[String: Any]])
        #expect(left.compactMap { $0["id"] as? String } == [rootID])
    }

    @Test("a path the member cannot read, a crafted request, a directory: refused, nothing opened or queued")
    func filesOnlyAsTheCallerCanOpenThem() async throws {
        let queue = try await SystemQueue.start(paused: true)
        defer { queue.stop() }
        let others = try queue.privateClip(of: Self.outsider, seconds: 0.2, frequency: 440)
        let direct = try await queue.run(as: Self.member, ["play", "--no-wait", others])
        #expect(direct.status == 66 && direct.stderrLines == ["announce: \(others): Permission denied"], "\(direct)")
        let link = "/home/\(Self.member)/link.wav"
        _ = try await Runner.run("/usr/sbin/runuser", ["-u", Self.member, "--", "ln", "-sf", others, link])
        let linked = try await queue.run(as: Self.member, ["play", "--no-wait", link])
        #expect(linked.status == 66, "\(linked)")
        let directory = try await queue.run(as: Self.member, ["play", "--no-wait", "/home/\(Self.member)"])
        #expect(directory.status == 66 && directory.stderr.contains("is a directory"), "\(directory)")

        // What a hand-made client sends: a path the daemon would open, a media name, a foreign
        // device, a handed directory, a handed /proc file.
        let crafted: [(String, String, Int)] = [
            ("a path", #"{"v":1,"op":"play","items":[{"clip":{"path":"\#(others)","gain":1,"pan":0,"loops":0}}]}"#, 77),
            (
                "a media name",
                #"{"v":1,"op":"play","items":[{"clip":{"path":"stdin","media":"abcdef","gain":1,"pan":0,"loops":0}}]}"#,
                77
            ),
            (
                "a chime path",
                #"{"v":1,"op":"play","items":[{"clip":{"path":"/x","handed":{"audio":0},"chime":"\#(others)","gain":1,"pan":0,"loops":0}}]}"#,
                77
            ),
            (
                "a file: device",
                #"{"v":1,"op":"play","items":[{"clip":{"path":"/x","handed":{"audio":0},"device":"file:FILE=/tmp/x,FORMAT=raw","gain":1,"pan":0,"loops":0}}]}"#,
                77
            ),
            (
                "a file:// URL",
                #"{"v":1,"op":"play","items":[{"clip":{"path":"file://\#(others)","url":"file://\#(others)","gain":1,"pan":0,"loops":0}}]}"#,
                77
            )
        ]
        for (what, line, code) in crafted {
            let reply = try await queue.rawRequest(as: Self.member, line, handing: "/dev/null")
            #expect(
                reply["ok"] as? Bool == false && (reply["error"] as? [String: Any])?["code"] as? Int == code,
                "\(what): \(reply)")
        }
        for (what, handed) in [("a directory", "/home/\(Self.member)"), ("a /proc file", "/proc/self/status")] {
            let line =
                #"{"v":1,"op":"play","items":[{"clip":{"path":"/x","handed":{"audio":0},"gain":1,"pan":0,"loops":0}}]}"#
            let reply = try await queue.rawRequest(as: Self.member, line, handing: handed)
            #expect(
                reply["ok"] as? Bool == false && (reply["error"] as? [String: Any])?["code"] as? Int == 66,
                "\(what): \(reply)")
        }
        #expect((try await queue.status(as: nil)["queued"] as? [Any])?.isEmpty == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.directory + "/media").isEmpty)
    }

    @Test("max-items-per-user refuses a request whole (69); root is not held back; owners survive SIGKILL")
    func capAndRestart() async throws {
        let queue = try await SystemQueue.start(paused: true, system: "max-items-per-user = 3\n")
        defer { queue.stop() }
        let clip = try queue.privateClip(of: Self.member, seconds: 0.1, frequency: 440)
        let three = try await queue.run(as: Self.member, ["play", "--no-wait", clip, clip, clip])
        #expect(three.status == 0, "\(three)")
        let fourth = try await queue.run(as: Self.member, ["play", "--no-wait", clip])
        #expect(
            fourth.status == 69 && fourth.stderr.contains("at most 3 items per user ([system] max-items-per-user)"),
            "\(fourth)")
        let rootClip = try queue.privateClip(of: nil, seconds: 0.1, frequency: 660)
        let root = try await Runner.run(
            try Harness.binary(), ["play", "--no-wait", rootClip, rootClip, rootClip, rootClip],
            environment: queue.rootEnvironment)
        #expect(root.status == 0, "\(root)")

        try await queue.restartAfterKill()
        let queued = try #require(try await queue.status(as: nil)["queued"] as? [[String: Any]])
        let names = queued.compactMap { ($0["owner"] as? [String: Any])?["name"] as? String }
        #expect(names.filter { $0 == Self.member }.count == 3 && names.filter { $0 == "root" }.count == 4, "\(queued)")
        let resumed = try await Runner.run(try Harness.binary(), ["resume"], environment: queue.rootEnvironment)
        #expect(resumed.status == 0, "\(resumed)")
        try await queue.expectCapture(equals: Array(repeating: clip, count: 3) + Array(repeating: rootClip, count: 4))
    }

    @Test("a member's waiting play outlives a SIGKILL of the system daemon and exits 0 when it played")
    func waitingClientSurvivesRestart() async throws {
        let queue = try await SystemQueue.start(paused: true)
        defer { queue.stop() }
        let clip = try queue.privateClip(of: Self.member, seconds: 0.2, frequency: 440)
        let waiting = try queue.launch(as: Self.member, ["play", clip], killAfter: 60)
        for _ in 0..<200 where ((try? await queue.status(as: nil)["queued"] as? [Any])??.count ?? 0) < 1 {
            try await Task.sleep(for: .milliseconds(50))
        }
        // Down for a second: the waiting client finds no socket, and waits for the next daemon
        // (it once took that for no system queue and tried to start one in its directory: 69).
        try await queue.restartAfterKill(downFor: 1)
        let resumed = try await Runner.run(try Harness.binary(), ["resume"], environment: queue.rootEnvironment)
        #expect(resumed.status == 0, "\(resumed)")
        let outcome = await waiting.outcome()
        #expect(outcome.status == 0, "\(outcome)")
        try await queue.expectCapture(equals: [clip])
    }

    @Test("ten users with a hundred items each at once: every acknowledged item plays, once")
    func flood() async throws {
        // Paused until all are queued: the file device starts over whenever it is opened again.
        let queue = try await SystemQueue.start(paused: true)
        defer { queue.stop() }
        let users = (0..<10).map { "annc-flood\($0)" }
        var clips: [String] = []
        for user in users {
            try SystemQueue.ensureUser(user, inGroup: true)
            clips.append(try queue.privateClip(of: user, seconds: 0.02, frequency: 440))
        }
        let runs = try zip(users, clips).map { user, clip in
            try queue.launch(as: user, ["play", "-q"] + Array(repeating: clip, count: 100), killAfter: 240)
        }
        var queued = 0
        for _ in 0..<1200 where queued < 1000 {
            queued = (try await queue.status(as: nil)["queued"] as? [Any])?.count ?? 0
            if queued < 1000 { _ = await queue.daemon.exited(within: 0.1) }
        }
        #expect(queued == 1000)
        let resumed = try await Runner.run(try Harness.binary(), ["resume"], environment: queue.rootEnvironment)
        #expect(resumed.status == 0, "\(resumed)")
        for (user, run) in zip(users, runs) {
            let outcome = await run.outcome()
            #expect(outcome.status == 0, "\(user): \(outcome)")
        }
        let frames = try await queue.captureFrames()
        #expect(frames == 1000 * 960, "\(frames) frames: \(Double(frames) / 960) clips of 960")
    }
}

/// One system daemon for one test: its directory and config under the test's work directory,
/// its capture on a file device there, started as root with Harness's binary.
final class SystemQueue: @unchecked Sendable {
    let directory: String
    let capture: String
    let config: String
    private(set) var daemon: ChildProcess
    private let logPath: String

    /// What the daemon logged so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The daemon's user (made by the first test, as the package's sysusers.d file would).
    nonisolated(unsafe) static var daemonUser: (uid: uid_t, gid: gid_t) = (0, 0)
    nonisolated(unsafe) static var groupID: gid_t = 0

    private init(directory: String, capture: String, config: String, log: String, daemon: ChildProcess) {
        self.directory = directory
        self.capture = capture
        self.config = config
        self.logPath = log
        self.daemon = daemon
    }

    /// The users and groups (once), then a daemon; `paused`: root pauses it first.
    static func start(paused: Bool = false, system: String = "") async throws -> SystemQueue {
        try prepareAccounts()
        let work = try Harness.workResult.get().appendingPathComponent("system-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        chown(work, daemonUser.uid, daemonUser.gid)  // the capture is the daemon's to write
        let config = work + "/config"
        try (Harness.baseConfig + "[system]\n" + system).write(toFile: config, atomically: true, encoding: .utf8)
        let queue = SystemQueue(
            directory: work + "/run", capture: work + "/capture.wav", config: config, log: work + "/daemon.log",
            daemon: try launchDaemon(
                directory: work + "/run", capture: work + "/capture.wav", config: config,
                log: work + "/daemon.log"))
        do {
            try await queue.waitForSocket()
            if paused {
                let pause = try await Runner.run(try Harness.binary(), ["pause"], environment: queue.rootEnvironment)
                guard pause.status == 0 else { throw HarnessError("pause: \(pause)") }
            }
        } catch {
            queue.stop()  // no daemon outlives a test that could not use it
            throw error
        }
        return queue
    }

    private static func launchDaemon(directory: String, capture: String, config: String, log: String) throws
        -> ChildProcess
    {
        var environment = try Harness.environment([
            "ANNOUNCE_RUNTIME_DIR": nil, "ANNOUNCE_SYSTEM_DIR": directory,
            "ANNOUNCE_SYSTEM_CONFIG": config
        ])
        environment["ANNOUNCE_RUNTIME_DIR"] = nil
        return try ChildProcess(
            "announce", [try Harness.binary(), "daemon", "--system", "--device", Harness.fileDevice(capture)],
            environment: environment, stdout: log, stderr: log)
    }

    /// Root's environment for a client: no ANNOUNCE_RUNTIME_DIR, so the automatic choice decides.
    var rootEnvironment: [String: String?] { ["ANNOUNCE_RUNTIME_DIR": nil, "ANNOUNCE_SYSTEM_DIR": directory] }

    /// Bounded: the daemon listens within 10 s or has failed.
    private func waitForSocket() async throws {
        for _ in 0..<200 {
            if SystemQueue.isSocket(directory + "/socket") { return }
            if await daemon.exited(within: 0.05) { break }
        }
        throw HarnessError("the system daemon did not listen: \(log)")
    }

    static func isSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }

    func stop() {
        daemon.stop()
    }

    /// SIGKILL, then a new daemon on the same directory.
    /// `downFor`: seconds with no daemon and no socket before the next one starts (a service
    /// manager's restart delay).
    func restartAfterKill(downFor: Double = 0) async throws {
        // Its socket goes first (a killed daemon leaves it; the next one's is waited for): a
        // client that notices the kill at once finds none, as a slow one would.
        unlink(directory + "/socket")
        daemon.signal(SIGKILL)
        _ = await daemon.exited(within: 10)
        if downFor > 0 { try await Task.sleep(for: .seconds(downFor)) }
        daemon = try Self.launchDaemon(directory: directory, capture: capture, config: config, log: logPath)
        try await waitForSocket()
    }

    /// `announce ARGS` in `user`'s own login shell.
    func run(as user: String, _ arguments: [String]) async throws -> Outcome {
        try await Runner.run("/usr/sbin/runuser", ["-l", user, "-c", command(arguments)])
    }

    func launch(as user: String, _ arguments: [String], killAfter: Double) throws -> Runner.Launched {
        let work = try Harness.workResult.get()
        let id = UUID().uuidString
        let out = work.appendingPathComponent("captures/\(id).stdout").path
        let err = work.appendingPathComponent("captures/\(id).stderr").path
        let child = try ChildProcess(
            "runuser", ["/usr/sbin/runuser", "-l", user, "-c", command(arguments)],
            environment: try Harness.environment(), stdout: out, stderr: err)
        return Runner.Launched(child: child, outPath: out, errPath: err, killAfter: killAfter)
    }

    private func command(_ arguments: [String]) throws -> String {
        "ANNOUNCE_SYSTEM_DIR=" + Self.quoted(directory) + " "
            + ([try Harness.binary()] + arguments).map(Self.quoted).joined(separator: " ")
    }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// `status --json`, parsed, as `user` (nil: root).
    func status(as user: String?) async throws -> [String: Any] {
        let outcome =
            if let user { try await run(as: user, ["status", "--json"]) } else {
                try await Runner.run(try Harness.binary(), ["status", "--json"], environment: rootEnvironment)
            }
        guard outcome.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
        else {
            throw HarnessError("status: \(outcome)")
        }
        return object
    }

    /// One request line from `user` by a client of Python's making, with `handing` opened by
    /// that user and sent beside it (SCM_RIGHTS); the reply, parsed.
    func rawRequest(as user: String, _ line: String, handing: String) async throws -> [String: Any] {
        let script = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            fd = os.open(sys.argv[3], os.O_RDONLY)
            socket.send_fds(s, [sys.argv[2].encode() + b"\\n"], [fd])
            s.settimeout(20); print(s.makefile().readline(), end="")
            """
        let outcome = try await Runner.run(
            "/usr/sbin/runuser",
            [
                "-u", user, "--", "python3", "-c", script,
                directory + "/socket", line, handing
            ])
        guard let object = try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any] else {
            throw HarnessError("no reply: \(outcome)")
        }
        return object
    }

    /// A tone made with sox into `user`'s home (0600, in a 0700 home; nil: root's, in the work
    /// directory), 48 kHz stereo 16-bit.
    func privateClip(of user: String?, seconds: Double, frequency: Int, name: String = "tone") throws -> String {
        let home =
            user.map { "/home/\($0)" }
            ?? (URL(fileURLWithPath: capture).deletingLastPathComponent().path + "/root-files")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let path = home + "/\(name)-\(frequency)-\(UUID().uuidString.prefix(6)).wav"
        let sox = try Self.sync(
            "/usr/bin/sox",
            [
                "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", String(seconds), "sine", String(frequency),
                "vol", "0.5"
            ])
        guard sox == 0 else { throw HarnessError("sox failed (\(sox)) making \(path)") }
        if let user, let account = getpwnam(user) {
            chown(path, account.pointee.pw_uid, account.pointee.pw_gid)
            chmod(path, 0o600)
            chmod(home, 0o700)
        } else {
            chmod(home, 0o700)
            chmod(path, 0o600)
        }
        return path
    }

    /// The capture's samples are exactly `files`' one after another (raw PCM from sox), once the
    /// daemon closed the device; with `anyOrderOf`, the same multiset of equal-length clips.
    func expectCapture(
        equals files: [String], anyOrderOf: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await waitForIdle()
        let captured = try Self.raw(capture)
        let parts = try files.map(Self.raw)
        if anyOrderOf {
            let size = parts.first?.count ?? 0
            let chunks = stride(from: 0, to: captured.count, by: max(size, 1)).map {
                captured[$0..<min($0 + size, captured.count)]
            }
            #expect(
                chunks.count == parts.count
                    && chunks.allSatisfy { chunk in parts.contains { Data($0) == Data(chunk) } },
                "capture of \(captured.count) bytes is not the \(parts.count) clips", sourceLocation: sourceLocation)
        } else {
            #expect(
                captured == parts.reduce(Data(), +),
                "capture of \(captured.count) bytes, the files \(parts.map(\.count))",
                sourceLocation: sourceLocation)
        }
    }

    /// Frames in the capture (sox), once the daemon closed the device.
    func captureFrames() async throws -> Int {
        try await waitForIdle()
        return try Self.raw(capture).count / 4
    }

    /// Until `status` says nothing plays or waits and the device is closed (bounded: 60 s).
    private func waitForIdle() async throws {
        for _ in 0..<600 {
            let status = try await status(as: nil)
            if status["playing"] == nil, (status["queued"] as? [Any])?.isEmpty == true,
                status["deviceOpen"] as? Bool == false
            {
                return
            }
            _ = await daemon.exited(within: 0.1)
        }
        throw HarnessError("the system queue did not become idle")
    }

    /// A file's samples as sox reads them: 16-bit raw, 48 kHz stereo.
    static func raw(_ path: String) throws -> Data {
        let out = path + ".\(UUID().uuidString.prefix(6)).raw"
        defer { unlink(out) }
        let status = try sync(
            "/usr/bin/sox", [path, "-t", "raw", "-e", "signed-integer", "-b", "16", "-c", "2", "-r", "48000", out])
        guard status == 0 else { throw HarnessError("sox could not read \(path)") }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// Runs a tool to its end (bounded: 30 s).
    @discardableResult
    static func sync(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let log = try Harness.workResult.get().appendingPathComponent("captures/tool-\(UUID().uuidString).log").path
        defer { unlink(log) }
        let child = try ChildProcess(
            (tool as NSString).lastPathComponent, [tool] + arguments, environment: ProcessInfo.processInfo.environment,
            stdout: log, stderr: log)
        guard let status = child.waitForExit(timeout: 30) else {
            child.stop()
            throw HarnessError("\(tool) did not finish")
        }
        return status
    }

    // MARK: accounts

    private static let accounts: Result<Void, HarnessError> = {
        do {
            if getgrnam("announce") == nil { try sync("/usr/sbin/groupadd", ["--system", "announce"]) }
            if getpwnam("announce") == nil {
                try sync(
                    "/usr/sbin/useradd",
                    [
                        "--system", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "-g", "announce", "announce"
                    ])
            }
            guard let user = getpwnam("announce"), let group = getgrnam("announce") else {
                return .failure(HarnessError("no user announce"))
            }
            daemonUser = (user.pointee.pw_uid, user.pointee.pw_gid)
            groupID = group.pointee.gr_gid
            try ensureUser(SystemQueueTests.member, inGroup: true)
            try ensureUser(SystemQueueTests.outsider, inGroup: false)
            return .success(())
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("\(error)"))
        }
    }()

    static func prepareAccounts() throws { try accounts.get() }

    /// A local user with a home, in group announce or not.
    static func ensureUser(_ name: String, inGroup: Bool) throws {
        if getpwnam(name) == nil {
            guard try sync("/usr/sbin/useradd", ["--create-home", "--shell", "/bin/sh", name]) == 0 else {
                throw HarnessError("useradd \(name) failed")
            }
        }
        if inGroup {
            try sync("/usr/sbin/usermod", ["-aG", "announce", name])
        } else {
            try sync("/usr/bin/gpasswd", ["-d", name, "announce"])
        }
    }
}

/// The desktop route (DESIGN §8, Where the sound goes): the listener's own daemon, on its own
/// PulseAudio (a private paced null sink the listener user runs), connects to the system queue;
/// root's items are heard there, recorded from the sink's monitor by the listener's parec and
/// measured with numpy. Only audio crosses: the listener's daemon never learns the path.
@Suite(
    "the system queue heard through a listener's sound server", .serialized,
    .enabled(
        if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
struct SystemQueueListenerTests {
    static let listener = "annc-listener"

    @Test("heard on the listener's sink; a higher item plays between; the preempted one resumes where heard")
    func heardThroughTheListener() async throws {
        let session = try await ListenerSession.start()
        defer { session.stop() }
        // Resumed however much was heard (--drop-after 1).
        let long = try session.queue.privateClip(of: nil, seconds: 12, frequency: 440, name: "secret-name")
        let high = try session.queue.privateClip(of: nil, seconds: 0.5, frequency: 880)
        try session.startRecording()
        let first = try Runner.launch(
            ["play", "--drop-after", "1", long], environment: session.queue.rootEnvironment, killAfter: 30)
        let preempting = try session.oneSecondAfterListenerStarts(
            [try Harness.binary(), "play", "--priority", "high", high])
        let preemptingOutcome = await preempting.outcome()
        #expect(preemptingOutcome.status == 0, "\(preemptingOutcome)")
        let firstOutcome = await first.outcome()
        #expect(firstOutcome.status == 0, "\(firstOutcome)")
        let heard = try await session.stopRecording(tones: [440, 880])
        let listenerLog = (try? String(contentsOfFile: session.listenerLog, encoding: .utf8)) ?? ""
        try #require(heard.count == 3, "tones heard: \(heard)\n\(session.queue.log)\n\(listenerLog)")
        #expect(heard.map(\.tone) == [440, 880, 440], "\(heard)")
        #expect(abs(heard[1].seconds - 0.5) < 0.06, "\(heard)")
        #expect(abs(heard[0].seconds + heard[2].seconds - 12) < 0.1, "the long one, resumed where heard: \(heard)")
        #expect(!FileManager.default.fileExists(atPath: session.queue.capture), "played on the system's own device too")
        // Only audio crossed: the listener's daemon saw labels, never the path.
        let log = try String(contentsOfFile: session.listenerLog, encoding: .utf8)
        #expect(!log.contains("secret-name") && log.contains("system queue item"), "\(log)")
    }

    @Test("the listener paused their own queue: the machine's item does not wait for them, it plays on the device")
    func listenerPausedPlaysOnTheDevice() async throws {
        let session = try await ListenerSession.start()
        defer { session.stop() }
        let paused = try await Runner.run(
            "/usr/bin/setpriv",
            try ListenerSession.listenerCommand(
                session.paced, [try Harness.binary(), "pause"],
                extra: ["ANNOUNCE_RUNTIME_DIR=" + session.paced + "/run"]
            ).dropFirst().map { $0 })
        try #require(paused.status == 0, "\(paused)")
        let clip = try session.queue.privateClip(of: nil, seconds: 0.5, frequency: 440)
        let played = try await Runner.run(
            try Harness.binary(), ["play", clip], environment: session.queue.rootEnvironment)
        #expect(played.status == 0, "\(played)")
        try await session.queue.expectCapture(equals: [clip])
        #expect(session.queue.log.contains("queue is paused: it plays on the device"), "\(session.queue.log)")
    }

    @Test("the listener's daemon leaves mid-item: the item goes on on the device from where it was heard")
    func listenerLeaves() async throws {
        let session = try await ListenerSession.start()
        defer { session.stop() }
        let long = try session.queue.privateClip(of: nil, seconds: 6, frequency: 440)
        try session.startRecording()
        let play = try Runner.launch(["play", long], environment: session.queue.rootEnvironment, killAfter: 30)
        let leaving = try session.oneSecondAfterListenerStarts([
            "/bin/sh", "-c", "kill -TERM \(session.listenerDaemon.pid)"
        ])
        _ = await leaving.outcome()
        let outcome = await play.outcome()
        #expect(outcome.status == 0, "\(outcome)")
        let heard = try await session.stopRecording(tones: [440])
        let onDevice = try await session.queue.captureFrames()
        let seconds = (heard.first?.seconds ?? 0) + Double(onDevice) / 48000
        #expect(
            heard.count == 1 && onDevice > 0 && abs(seconds - 6) < 0.15,
            "listener \(heard), device \(Double(onDevice) / 48000) s")
        // Its spool kept the forwarded item (stopped where heard): started again, it ends it unplayed.
        let again = try session.startListenerDaemon()
        defer { again.stop() }
        try await session.waitForListenerLog("the system queue's play does not outlive its connection", count: 1)
        let status = try await Runner.run(
            "/usr/bin/setpriv",
            try ListenerSession.listenerCommand(
                session.paced, [try Harness.binary(), "status", "--json"],
                extra: ["ANNOUNCE_RUNTIME_DIR=" + session.paced + "/run"]
            ).dropFirst().map { $0 })
        let parsed = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(parsed?["playing"] == nil && (parsed?["queued"] as? [Any])?.isEmpty == true, "\(status)")
    }
}

/// A listener user's PulseAudio (Tests/Shell/paced-audio.sh run as that user), its own
/// `announce daemon` on it, and a system queue whose `[system] listener` names the user.
final class ListenerSession: @unchecked Sendable {
    let queue: SystemQueue
    let paced: String
    let listenerDaemon: ChildProcess
    let listenerLog: String
    private var recorder: ChildProcess?
    private let recording: String

    private init(queue: SystemQueue, paced: String, listenerDaemon: ChildProcess, listenerLog: String) {
        self.queue = queue
        self.paced = paced
        self.listenerDaemon = listenerDaemon
        self.listenerLog = listenerLog
        recording = paced + "/heard.raw"
    }

    static let script = Harness.repoRoot.appendingPathComponent("Tests/Shell/paced-audio.sh").path

    static func start() async throws -> ListenerSession {
        try SystemQueue.prepareAccounts()
        try SystemQueue.ensureUser(SystemQueueListenerTests.listener, inGroup: false)
        let account = try #require(getpwnam(SystemQueueListenerTests.listener)).pointee
        let queue = try await SystemQueue.start(system: "listener = \(SystemQueueListenerTests.listener)\n")
        let paced = URL(fileURLWithPath: queue.capture).deletingLastPathComponent().path + "/listener"
        let daemon: ChildProcess
        do {
            try FileManager.default.createDirectory(atPath: paced, withIntermediateDirectories: true)
            chown(paced, account.pw_uid, account.pw_gid)
            let up = try SystemQueue.sync(
                "/usr/sbin/runuser",
                [
                    "-u", SystemQueueListenerTests.listener, "--", "env", "PACED_WATCH_PID=\(getpid())",
                    script, "up", paced
                ])
            guard up == 0 else {
                throw HarnessError("paced-audio.sh up as \(SystemQueueListenerTests.listener) failed (\(up))")
            }
            daemon = try listenerDaemon(paced: paced, system: queue.directory, log: paced + "/daemon.log")
        } catch {
            queue.stop()
            _ = try? SystemQueue.sync(
                "/usr/sbin/runuser", ["-u", SystemQueueListenerTests.listener, "--", script, "down", paced])
            throw error
        }
        let session = ListenerSession(
            queue: queue, paced: paced, listenerDaemon: daemon, listenerLog: paced + "/daemon.log")
        do {
            try await session.waitForSystemLog(
                "\(SystemQueueListenerTests.listener)'s announce connected as a listener")
        } catch {
            session.stop()
            throw error
        }
        return session
    }

    /// The listener's own permanent daemon on its PulseAudio (`pulse`), as its user unit runs it.
    static func listenerDaemon(paced: String, system: String, log: String) throws -> ChildProcess {
        try ChildProcess(
            "setpriv",
            try listenerCommand(
                paced, [try Harness.binary(), "daemon", "--device", "pulse"],
                extra: [
                    "ANNOUNCE_SYSTEM_DIR=" + system, "ANNOUNCE_RUNTIME_DIR=" + paced + "/run",
                    "XDG_CONFIG_HOME=" + Harness.baseConfigHome
                ]),
            environment: [:], stdout: log, stderr: log)
    }

    /// The listener's daemon again, on the same runtime directory.
    func startListenerDaemon() throws -> ChildProcess {
        try Self.listenerDaemon(paced: paced, system: queue.directory, log: listenerLog)
    }

    /// `arguments` as the listener, with its PulseAudio's variables (paced DIR/env) and `extra`.
    static func listenerCommand(_ paced: String, _ arguments: [String], extra: [String] = []) throws -> [String] {
        let variables = try String(contentsOfFile: paced + "/env", encoding: .utf8).split(separator: "\n")
            .compactMap { line in line.hasPrefix("export ") ? String(line.dropFirst("export ".count)) : nil }
        return [
            "/usr/bin/setpriv", "--reuid", SystemQueueListenerTests.listener, "--regid",
            SystemQueueListenerTests.listener,
            "--init-groups", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin",
            "HOME=/home/\(SystemQueueListenerTests.listener)"
        ]
            + variables + extra + arguments
    }

    func startRecording() throws {
        recorder = try ChildProcess(
            "setpriv",
            try Self.listenerCommand(
                paced,
                [
                    "/usr/bin/sh", "-c",
                    "exec parec --raw --format=s16le --rate=48000 --channels=2 --latency-msec=10 -d announce_paced.monitor > \"$0\"",
                    recording
                ]),
            environment: [:], stdout: paced + "/parec.log", stderr: paced + "/parec.log")
    }

    /// Stops the recorder (SIGTERM, by pid) and measures the tones heard, in order.
    func stopRecording(tones: [Int]) async throws -> [(tone: Int, seconds: Double)] {
        try await Task.sleep(for: .milliseconds(300))  // the sink's last period reaches the monitor
        recorder?.stop()
        let out = paced + "/tones.json"
        let script = Harness.repoRoot.appendingPathComponent("Tests/Shell/tone-sequence.py").path
        let status = try SystemQueue.sync(
            "/bin/sh",
            [
                "-c", "\"$0\" \"$1\" 48000 2 \(tones.map(String.init).joined(separator: " ")) > \"$2\"",
                script, recording, out
            ])
        guard status == 0,
            let runs = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out)))
                as? [[Double]]
        else {
            throw HarnessError("tone-sequence.py failed on \(recording)")
        }
        return runs.map { (Int($0[0]), $0[1]) }
    }

    /// `command`, run as root by a shell 1 s after the listener's daemon logs its first start
    /// (waited for 10 s at most). A shell, not this task: a loaded test run kept the cooperative
    /// pool's threads busy past a whole 12 s item in CI three times.
    func oneSecondAfterListenerStarts(_ command: [String]) throws -> Runner.Launched {
        try Runner.launch(
            [
                "-c", "for i in $(seq 200); do grep -q started \"$0\" && break; sleep 0.05; done; sleep 1; exec \"$@\"",
                listenerLog
            ] + command, executable: "/bin/sh", environment: queue.rootEnvironment, killAfter: 30)
    }

    /// Until the listener's daemon has logged `word` on `count` lines (bounded: 10 s).
    func waitForListenerLog(_ word: String, count: Int) async throws {
        for _ in 0..<200 {
            let log = (try? String(contentsOfFile: listenerLog, encoding: .utf8)) ?? ""
            if log.split(separator: "\n").filter({ $0.contains(word) }).count >= count { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError(
            "the listener's daemon did not log '\(word)': \((try? String(contentsOfFile: listenerLog, encoding: .utf8)) ?? "")"
        )
    }

    /// Until the system daemon has logged `line` (bounded: 10 s).
    func waitForSystemLog(_ line: String) async throws {
        for _ in 0..<200 {
            if queue.log.contains(line) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError("the system daemon did not log '\(line)': \(queue.log)")
    }

    func stop() {
        recorder?.stop()
        listenerDaemon.stop()
        queue.stop()
        _ = try? SystemQueue.sync(
            "/usr/sbin/runuser", ["-u", SystemQueueListenerTests.listener, "--", Self.script, "down", paced])
    }
}
