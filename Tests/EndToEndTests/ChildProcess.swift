import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Every process the end-to-end tests start (announce, its daemon, sox, PulseAudio's tools):
/// posix_spawn with stdin from /dev/null, stdout and stderr appended to files, default signal
/// handling and no descriptor above 2; a thread blocked in waitpid learns of the exit at once.
///
/// Not Foundation's Process, whose children inherit the test runner's blocked signal mask
/// (a SIGTERM to parec or to a shell then does nothing) and which learns of an exit from EOF on
/// a socket that every grandchild inherits (PulseAudio started by Tests/Shell/paced-audio.sh would
/// hang `waitUntilExit` until PulseAudio exits).
final class ChildProcess: @unchecked Sendable {
    let name: String
    let pid: pid_t
    private let exited = DispatchGroup()
    private let lock = NSLock()
    private var rawStatus: Int32?

    /// Runs `arguments` (argv[0] looked up in PATH) with exactly `environment`.
    /// `stderr` may be the same file as `stdout`; `stdin` is opened for reading (a FIFO blocks
    /// until it has a writer).
    init(
        _ name: String, _ arguments: [String], environment: [String: String], stdout: String, stderr: String,
        stdin: String = "/dev/null"
    ) throws {
        self.name = name
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if stderr == stdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        Self.addCloseFrom3(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let error = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard error == 0 else {
            throw HarnessError("cannot start \(arguments[0]) (\(name)): \(String(cString: strerror(error)))")
        }
        self.pid = pid
        exited.enter()
        let child = pid
        let reaper = Thread { [self] in
            var raw: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(child, &raw, 0) } while result < 0 && errno == EINTR
            lock.withLock { rawStatus = result == child ? raw : nil }
            exited.leave()
        }
        reaper.name = "reaper \(name) \(pid)"
        reaper.start()
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which Swift's Glibc module does not export.
    private static func addCloseFrom3(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }

    var isRunning: Bool { exited.wait(timeout: .now()) == .timedOut }

    /// The exit status, or nil while it runs or when a signal ended it.
    var exitStatus: Int32? {
        lock.withLock { rawStatus.flatMap { $0 & 0x7f == 0 ? ($0 >> 8) & 0xff : nil } }
    }

    /// The signal that ended it, or nil while it runs or when it exited.
    var terminatingSignal: Int32? {
        lock.withLock { rawStatus.flatMap { $0 & 0x7f != 0 ? $0 & 0x7f : nil } }
    }

    /// "exit N", "killed by signal N" or "running", for messages.
    var endDescription: String {
        if let status = exitStatus { return "exit \(status)" }
        if let signal = terminatingSignal { return "killed by signal \(signal)" }
        return isRunning ? "running" : "reaped elsewhere"
    }

    /// Blocks until it exits: its status (128 + N for signal N, -1 if unknown), or nil after `timeout` seconds.
    func waitForExit(timeout: Double) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
        return exitStatus ?? terminatingSignal.map { 128 + $0 } ?? -1
    }

    /// Suspends until it exits (true), or `timeout` seconds pass (false); blocks no thread.
    func exited(within timeout: Double) async -> Bool {
        let once = Once()
        return await withCheckedContinuation { continuation in
            exited.notify(queue: .global()) { if once.claim() { continuation.resume(returning: true) } }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if once.claim() { continuation.resume(returning: false) }
            }
        }
    }

    /// Suspends until it exits: its status (as `waitForExit`'s), or nil after `timeout` seconds; blocks no thread.
    func status(within timeout: Double) async -> Int32? {
        await exited(within: timeout) ? waitForExit(timeout: 0) : nil
    }

    /// Sends `number` while it runs (never to a pid it no longer owns).
    func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; returns once it is reaped.
    func stop(grace: Double = 3) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            _ = waitForExit(timeout: 10)
        }
    }
}

/// True for the first caller only.
private final class Once: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func claim() -> Bool {
        lock.withLock {
            defer { done = true }
            return !done
        }
    }
}

/// Runs blocking work (socket reads, waits on processes) off the cooperative pool, on a thread of
/// its own: Dispatch's global queue adds a thread for blocked work only about once a second, so in
/// the full run (dozens of tests waiting at once) a wait there started seconds late.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// `body` with what `up` brings up, taken down by `down` after it, also when it throws; both
/// blocking steps (a sound server's start, its stop) run off the cooperative pool.
func withServer<Server: Sendable>(
    up: @escaping @Sendable () throws -> Server, down: @escaping @Sendable (Server) -> Void,
    _ body: (Server) async throws -> Void
) async throws {
    let server = try await offPool(up)
    do {
        try await body(server)
    } catch {
        _ = try? await offPool { down(server) }
        throw error
    }
    try await offPool { down(server) }
}

/// Seconds on the monotonic clock.
func monotonicNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Test clips made by sox: pure sines (or silence) as 16-bit WAV.
enum Sox {
    /// `seconds` of a sine of `frequency` Hz (silence when nil) at `decibels` dBFS, written to `path`.
    static func tone(
        _ path: String, frequency: Double?, seconds: Double, decibels: Double = -6,
        rate: Int = 48000, channels: Int
    ) throws {
        let synth =
            frequency.map { ["synth", "\(seconds)", "sine", "\($0)", "gain", "\(decibels)"] }
            ?? ["trim", "0", "\(seconds)"]
        let errors = path + ".sox.err"
        defer { unlink(errors) }
        let sox = try ChildProcess(
            "sox", ["sox", "-R", "-D", "-V1", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", path] + synth,
            environment: ProcessInfo.processInfo.environment, stdout: "/dev/null", stderr: errors)
        let status = sox.waitForExit(timeout: 30)
        guard status == 0, FileManager.default.fileExists(atPath: path) else {
            let message = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw HarnessError(
                "sox could not make \(path) (\(status.map { "exit \($0)" } ?? "no exit within 30 s"); install sox): \(message)"
            )
        }
    }
}

/// Keeps the tests that load the machine hardest (a hundred clients at once) and the tests that
/// time what is heard to a few ms (the paced device) from overlapping: on a loaded 2-core
/// machine the storm of process starts delays the daemon's reaction to a preemption by tens of
/// ms, the very quantity those tests bound. Everything else still runs in parallel.
actor HeavyLoad {
    private static let shared = HeavyLoad()
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    private func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { held = false } else { waiting.removeFirst().resume() }
    }

    /// Runs `body` while no other `exclusively` body runs.
    static func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await shared.acquire()
        do {
            let result = try await body()
            await shared.release()
            return result
        } catch {
            await shared.release()
            throw error
        }
    }
}
