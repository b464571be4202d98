import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Helpers for the daemon end-to-end tests (DaemonTests, QuietTests, and PacedHarness's
// sessions): a private runtime directory per test, daemons started and always stopped, a
// raw NDJSON client on the daemon's socket, the wire types as the tests read them, and
// tone clips.

// MARK: - Wire types, as a client reads them

struct WireOutcome: Decodable, Sendable {
    var kind: String
    var reason: String?
    var code: Int32?
}

/// One event, from the socket or a line of `announce events --json`.
struct WireEvent: Decodable, Sendable, CustomStringConvertible {
    var v: Int
    var event: String
    /// Seconds since the epoch, on the daemon's clock.
    var time: Double
    var id: String?
    var path: String?
    var priority: String?
    /// interruption-began's reason.
    var reason: String?
    /// interruption-ended's.
    var shouldResume: Bool?
    /// Seconds heard: interruption-began's, started's resume point, progress.
    var heard: Double?
    /// started's and finished's length of the clip, when known.
    var duration: Double?
    var outcome: WireOutcome?
    var device: String?
    var format: String?
    /// quiet: in effect now, and the switch position.
    var quiet: Bool?
    var state: String?
    /// finished: what went wrong on the way (truncation, a live stream's reconnections).
    var warning: String?
    /// title: a live stream's title now.
    var title: String?

    /// An event line; nil for anything else.
    init?(line: some StringProtocol) {
        guard let event = try? JSONDecoder().decode(Self.self, from: Data(line.utf8)) else { return nil }
        self = event
    }

    var description: String {
        "\(event) \(path.map { ($0 as NSString).lastPathComponent } ?? id ?? "") t=\(time)"
            + (heard.map { " heard=\($0)" } ?? "") + (outcome.map { " \($0.kind)" } ?? "")
            + ((outcome?.reason ?? reason).map { " (\($0))" } ?? "")
    }
}

struct WireItem: Decodable, Sendable {
    var id: String
    var state: String
    var path: String
    var priority: String
    var tag: String?
    var device: String?
}

struct WireStatus: Decodable, Sendable {
    var pid: Int32
    var device: String
    var deviceOpen: Bool
    var paused: Bool
    var playing: WireItem?
    var mixing: [WireItem]?
    var queued: [WireItem]
    var scheduled: [WireItem]
    var quiet: Bool?
    var quietSetting: String?
    var quietUntil: Double?
    var quietHours: [String]?
    var otherAudio: WireOtherAudio?
    var holds: [String]?
    var otherAudioPlaying: Bool?
    var otherAudioStreams: [String]?
    var call: String?
}

/// `status`'s otherAudio: whether announce lowers other applications now.
struct WireOtherAudio: Decodable, Sendable {
    var state: String
    var streams: Int
    var reason: String?
}

struct WireReplyError: Decodable, Sendable {
    var code: Int32
    var message: String
}

struct WireReply: Decodable, Sendable {
    var v: Int
    var ok: Bool
    var error: WireReplyError?
    var ids: [String]?
    var unknown: [String]?
    var status: WireStatus?
}

/// One line from the daemon: a reply, or an event (it has an `event` key).
enum WireMessage: Sendable {
    case reply(WireReply)
    case event(WireEvent)

    private struct Envelope: Decodable { var event: String? }

    init(line: String) throws {
        let data = Data(line.utf8)
        if try JSONDecoder().decode(Envelope.self, from: data).event == nil {
            self = .reply(try JSONDecoder().decode(WireReply.self, from: data))
        } else {
            self = .event(try JSONDecoder().decode(WireEvent.self, from: data))
        }
    }
}

// MARK: - Raw socket client

/// A raw NDJSON client on the daemon's Unix socket. Blocking calls: use from `offPool`
/// (or the async wrappers below). Every read has a deadline.
final class SocketClient: @unchecked Sendable {
    let fd: Int32
    let path: String
    private var buffer: [UInt8] = []
    private let lock = NSLock()

    /// Connects once; throws (with errno) when nobody answers. `fd` is set only once connected:
    /// a throw after every property is set runs deinit, whose close would close the descriptor
    /// twice, the second time someone else's (another test's file, opened meanwhile).
    init(path: String) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw HarnessError("socket path too long (\(bytes.count) bytes): \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            close(fd)
            throw HarnessError("connect \(path): \(String(cString: strerror(code)))")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes all of `bytes` (MSG_NOSIGNAL); returns the errno that stopped it, or 0.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return errno }
            offset += sent
        }
        return 0
    }

    /// `line` and a newline; throws when the daemon is gone.
    func send(_ line: String) throws {
        let code = write(Array((line + "\n").utf8))
        if code != 0 { throw HarnessError("send to \(path): \(String(cString: strerror(code)))") }
    }

    /// The next line, without its newline; nil at end of stream. Throws at the deadline.
    func readLine(timeout: Double = 10) throws -> String? {
        lock.lock()
        defer { lock.unlock() }
        let deadline = monotonicNow() + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            let left = deadline - monotonicNow()
            guard left > 0 else {
                throw HarnessError("no line from the daemon within \(timeout) s (have \(buffer.count) bytes)")
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(max(1, left * 1000)))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 && errno == ECONNRESET { return nil }
            if got < 0 { throw HarnessError("recv from \(path): \(String(cString: strerror(errno)))") }
            if got == 0 {
                guard !buffer.isEmpty else { return nil }
                let line = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return line
            }
            buffer.append(contentsOf: chunk[0..<got])
        }
    }

    /// The next message; nil at end of stream.
    func next(timeout: Double = 10) throws -> WireMessage? {
        guard let line = try readLine(timeout: timeout) else { return nil }
        do {
            return try WireMessage(line: line)
        } catch {
            throw HarnessError("unreadable line from the daemon: \(line.prefix(300)) (\(error))")
        }
    }

    /// Sends a request and returns the first reply (events before it are skipped).
    func call(_ line: String, timeout: Double = 10) throws -> WireReply {
        try send(line)
        while let message = try next(timeout: timeout) {
            if case .reply(let reply) = message { return reply }
        }
        throw HarnessError("the daemon closed the connection without replying to \(line.prefix(200))")
    }

    /// Events until `done` says stop (returns the events read, the last included).
    func events(until done: (WireEvent) -> Bool, timeout: Double = 20) throws -> [WireEvent] {
        let deadline = monotonicNow() + timeout
        var seen: [WireEvent] = []
        while true {
            let left = deadline - monotonicNow()
            guard left > 0 else { throw HarnessError("waited \(timeout) s for an event; saw \(seen)") }
            guard let message = try next(timeout: left) else {
                throw HarnessError("the daemon closed the event stream; saw \(seen)")
            }
            guard case .event(let event) = message else { continue }
            seen.append(event)
            if done(event) { return seen }
        }
    }
}

// MARK: - A daemon we started

/// `announce daemon` run in the foreground by the test, as a child process.
final class DaemonProcess: @unchecked Sendable {
    let child: ChildProcess
    let logPath: String

    var pid: pid_t { child.pid }
    var isRunning: Bool { child.isRunning }
    /// Its exit status; nil while it runs or when a signal ended it.
    var exitStatus: Int32? { child.exitStatus }
    /// The signal that ended it, if one did.
    var terminatingSignal: Int32? { child.terminatingSignal }

    /// `announce daemon ARGUMENTS` with `Harness.environment(environment)`, output to `logPath`.
    init(arguments: [String], logPath: String, environment: [String: String?]) throws {
        self.logPath = logPath
        child = try ChildProcess(
            "announce daemon", [try Harness.binary(), "daemon"] + arguments,
            environment: try Harness.environment(environment), stdout: logPath, stderr: logPath)
    }

    /// Suspends until the process ends; false at the deadline.
    func waitForExit(timeout: Double) async -> Bool { await child.exited(within: timeout) }

    func signal(_ number: Int32) { child.signal(number) }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}

// MARK: - A private runtime directory

/// One test's ANNOUNCE_RUNTIME_DIR (0700, a short path under the scratch directory),
/// with every daemon that ran in it stopped by `cleanup()`.
final class DaemonRuntime: @unchecked Sendable {
    let path: String
    /// What every process of this runtime gets on top of `Harness.environment()`.
    let environment: [String: String?]
    private let lock = NSLock()
    private var started: [DaemonProcess] = []
    nonisolated(unsafe) private static var counter = 0
    private static let counterLock = NSLock()

    var socketPath: String { path + "/socket" }
    var spoolPath: String { path + "/spool" }
    var mediaPath: String { path + "/media" }
    var daemonLogPath: String { path + "/daemon.log" }

    /// A fresh, empty directory, mode 0700: `path`, else `<scratch>/d/N`. `environment`
    /// entries go to every process started for it (nil removes a variable).
    init(path given: String? = nil, environment extra: [String: String?] = [:]) throws {
        if let given {
            path = given
        } else {
            let parent = try Harness.workResult.get().path + "/d"
            if mkdir(parent, 0o755) != 0 && errno != EEXIST { throw HarnessError("cannot create \(parent)") }
            let number = Self.counterLock.withLock {
                Self.counter += 1
                return Self.counter
            }
            path = "\(parent)/\(number)"
        }
        environment = extra.merging(["ANNOUNCE_RUNTIME_DIR": path]) { $1 }
        try? FileManager.default.removeItem(atPath: path)
        guard mkdir(path, 0o700) == 0 else {
            throw HarnessError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        chmod(path, 0o700)  // whatever the umask
        guard (path + "/socket").utf8.count < 108 else {
            throw HarnessError("runtime path too long for a Unix socket: \(path)")
        }
    }

    /// `announce ARGS...` with this runtime directory, reading `stdin`.
    func announce(
        _ arguments: [String], environment extra: [String: String?] = [:],
        stdin: String = "/dev/null"
    ) async throws -> Outcome {
        try await Runner.announce(arguments, environment: environment.merging(extra) { $1 }, stdin: stdin)
    }

    /// `announce ARGS...`, killed after `seconds` (the outcome then says "killed by signal 9"):
    /// for a command that might hang.
    func announce(_ arguments: [String], killAfter seconds: Double) async throws -> Outcome {
        try await Runner.announce(arguments, environment: environment, killAfter: seconds)
    }

    /// `announce ARGS...` (a control command: pause, resume, quiet on...), expected to exit 0.
    func control(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let result = try await announce(arguments)
        #expect(
            result.status == 0, "announce \(arguments.joined(separator: " ")): \(result)",
            sourceLocation: sourceLocation)
    }

    /// The environment the processes of this runtime get, resolved.
    func resolvedEnvironment() throws -> [String: String] { try Harness.environment(environment) }

    /// Starts `announce daemon --device DEVICE` (without `--device` when nil) in the background
    /// and returns once its socket answers a status request from that very process.
    /// `environment` entries override the runtime's (nil removes one).
    @discardableResult
    func startDaemon(
        device: String?, arguments: [String] = [], environment extra: [String: String?] = [:],
        timeout: Double = 15
    ) async throws -> DaemonProcess {
        let index = lock.withLock { started.count }
        let daemon = try DaemonProcess(
            arguments: (device.map { ["--device", $0] } ?? []) + arguments,
            logPath: "\(path)/fg-daemon-\(index).log",
            environment: environment.merging(extra) { $1 })
        lock.withLock { started.append(daemon) }
        do {
            try await waitForDaemon(
                timeout: timeout, { $0 == daemon.pid },
                unless: {
                    daemon.isRunning ? nil : "announce daemon exited (\(daemon.child.endDescription)) before answering"
                })
        } catch {
            throw HarnessError("\(error); its log: \(daemon.log)")
        }
        return daemon
    }

    /// Waits until a daemon answers a status request on the socket with a pid that `accept`s;
    /// returns that pid. Throws at the deadline, or as soon as `unless` gives a reason.
    @discardableResult
    func waitForDaemon(
        timeout: Double = 15, _ accept: @escaping @Sendable (pid_t) -> Bool,
        unless failure: () -> String? = { nil }
    ) async throws -> pid_t {
        let deadline = monotonicNow() + timeout
        var backoff: UInt64 = 1_000_000
        while true {
            if let reason = failure() { throw HarnessError(reason) }
            if let client = try? client(),
                let reply = try? await offPool({ try client.call(#"{"v":1,"op":"status"}"#, timeout: 5) }),
                let pid = reply.status?.pid, accept(pid)
            {
                return pid
            }
            guard monotonicNow() < deadline else {
                throw HarnessError(
                    "no daemon answered on \(socketPath) within \(timeout) s; daemon.log: \(daemonLogLines())")
            }
            // Nothing to wait on before the socket exists: back off between connection attempts.
            try await Task.sleep(nanoseconds: backoff)
            backoff = min(backoff * 2, 50_000_000)
        }
    }

    /// A raw client connected to the daemon's socket.
    func client() throws -> SocketClient { try SocketClient(path: socketPath) }

    /// A client subscribed to every event (the subscription is acknowledged before it returns).
    func subscribe() async throws -> SocketClient {
        let client = try client()
        let reply = try await offPool { try client.call(#"{"v":1,"op":"events"}"#) }
        guard reply.ok else { throw HarnessError("events subscription refused: \(reply)") }
        return client
    }

    /// The pid written in daemon.lock, if any.
    var lockPID: pid_t? { Harness.daemonPID(runtime: path) }

    /// `announce queue --json`, decoded.
    func status() async throws -> WireStatus {
        let result = try await announce(["queue", "--json"])
        guard result.status == 0 else { throw HarnessError("announce queue --json failed: \(result)") }
        do {
            return try JSONDecoder().decode(WireStatus.self, from: Data(result.stdout.utf8))
        } catch {
            throw HarnessError("announce queue --json printed something else: \(result.stdout.prefix(300)) (\(error))")
        }
    }

    /// Names in `spool/` (the item files and anything else).
    func spoolEntries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: spoolPath)) ?? []).sorted()
    }

    /// Names in `media/` (stdin's audio, temporary files too); none when it does not exist.
    func mediaEntries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: mediaPath)) ?? []).sorted()
    }

    /// Lines of the auto-started daemon's log.
    func daemonLogLines() -> [String] {
        ((try? String(contentsOfFile: daemonLogPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// True while some process holds daemon.lock (a daemon runs for this directory). Read from
    /// /proc/locks: taking the lock to test it could make a starting daemon think another one runs.
    var daemonLockHeld: Bool {
        var info = stat()
        guard stat(path + "/daemon.lock", &info) == 0,
            let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return false }
        let suffix = ":\(info.st_ino)"
        return locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count >= 6 && fields[1] == "FLOCK" && !line.contains("->") && fields[5].hasSuffix(suffix)
        }
    }

    /// True when `pid` is a live (not zombie) process whose environment names this runtime directory.
    func isOurDaemon(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            stat[stat.index(close, offsetBy: 2)] != "Z",
            let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ")
        else { return false }
        return environ.split(separator: 0).contains {
            String(decoding: $0, as: UTF8.self) == "ANNOUNCE_RUNTIME_DIR=\(path)"
        }
    }

    /// Live `announce daemon` processes whose environment names this runtime directory.
    func daemonProcesses() -> [pid_t] {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }
        return pids.filter { pid in
            guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let arguments = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.count >= 2 && arguments[0].hasSuffix("announce") && arguments[1] == "daemon"
                && isOurDaemon(pid)
        }.sorted()
    }

    /// Waits until no process holds daemon.lock; bounded.
    func waitForLockRelease(timeout: Double) async -> Bool {
        let deadline = monotonicNow() + timeout
        while daemonLockHeld {
            if monotonicNow() > deadline { return false }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return true
    }

    /// Kills the daemon holding daemon.lock with `signal` (not one of ours: an auto-started one).
    func signalLockHolder(_ signal: Int32) -> pid_t? {
        guard let pid = lockPID, isOurDaemon(pid) else { return nil }
        kill(pid, signal)
        return pid
    }

    /// Stops everything that runs for this directory: cancels what is queued (so waiting
    /// clients end instead of starting another daemon), then SIGTERM (SIGKILL after 5 s)
    /// to every daemon we started and to whichever daemon holds the lock.
    func cleanup() async {
        if let client = try? client() {
            _ = try? await offPool { try client.call(#"{"v":1,"op":"stop"}"#, timeout: 2) }
        }
        for _ in 0..<3 {
            let ours = lock.withLock { started }
            for daemon in ours where daemon.isRunning {
                daemon.signal(SIGTERM)
                if await !daemon.waitForExit(timeout: 5) {
                    daemon.signal(SIGKILL)
                    _ = await daemon.waitForExit(timeout: 5)
                }
            }
            guard daemonLockHeld else { return }
            guard let pid = signalLockHolder(SIGTERM) else { return }
            if await !waitForLockRelease(timeout: 5) {
                kill(pid, SIGKILL)
                _ = await waitForLockRelease(timeout: 5)
            }
        }
    }
}

/// Runs `body` with a fresh runtime directory and always cleans it up, also when it throws.
func withDaemonRuntime(_ body: (DaemonRuntime) async throws -> Void) async throws {
    let runtime = try DaemonRuntime()
    do {
        try await body(runtime)
    } catch {
        await runtime.cleanup()
        throw error
    }
    await runtime.cleanup()
}

// MARK: - Tone clips

enum Tones {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var made: [String: String] = [:]

    /// A mono 48 kHz 16-bit sine of `frequency` Hz at -6 dBFS lasting `seconds`, made once by sox.
    static func clip(_ frequency: Int, seconds: Double = 0.3) throws -> String {
        let name = "tone-\(frequency)-\(Int(seconds * 1000))ms.wav"
        return try lock.withLock {
            if let path = made[name] { return path }
            let dir = try Harness.workResult.get().appendingPathComponent("tones").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let path = dir + "/" + name
            try Sox.tone(path, frequency: Double(frequency), seconds: seconds, channels: 1)
            made[name] = path
            return path
        }
    }

    /// The order tones were heard in a capture of the file device (mono or first channel).
    static func heardOrder(capture path: String, candidates: [Double]) throws -> [Double] {
        let capture = try WAVCapture(path: path)
        let format: SampleFormat =
            switch capture.bitsPerSample {
            case 16: .int16
            case 32 where capture.formatTag == 3: .float32
            default: .int32
            }
        let pcm = PCM(format: format, channels: capture.channels, bytes: capture.data)
        let timeline = ToneAnalysis.timeline(pcm.channel(0), rate: Double(capture.sampleRate), tones: candidates)
        return ToneAnalysis.segments(timeline).map(\.tone)
    }
}

extension String {
    /// Twelve lowercase hex digits: an item id as the daemon makes them.
    var isItemID: Bool {
        utf8.count == 12 && utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
