import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of the test harness itself (no binary, fixtures not generated, a hung process).
struct HarnessError: Error, CustomStringConvertible, Sendable {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Where things are: the repository, the binary under test, the generated fixtures.
enum Harness {
    /// `<repo>` from `<repo>/Tests/EndToEndTests/Harness.swift`.
    static let repoRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `$ANNOUNCE_BIN`, else `<repo>/.build/debug/announce`.
    static let binaryResult: Result<String, HarnessError> = {
        let path =
            ProcessInfo.processInfo.environment["ANNOUNCE_BIN"].flatMap { $0.isEmpty ? nil : $0 }
            ?? repoRoot.appendingPathComponent(".build/debug/announce").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return .failure(
                HarnessError(
                    "the announce binary is missing at \(path): run `swift build` first (or set ANNOUNCE_BIN)"))
        }
        return .success(path)
    }()

    static func binary() throws -> String { try binaryResult.get() }

    /// A per-process scratch directory holding fixtures/ and captures/; removed at exit
    /// unless ANNOUNCE_E2E_KEEP=1.
    static let workResult: Result<URL, HarnessError> = {
        let base = FileManager.default.temporaryDirectory
        let dir = base.appendingPathComponent("announce-e2e-\(getpid())-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(
                at: dir.appendingPathComponent("captures"),
                withIntermediateDirectories: true)
            // Readable by everyone: one test runs the binary as an unprivileged user.
            for path in [dir.path, dir.appendingPathComponent("captures").path] { chmod(path, 0o755) }
        } catch {
            return .failure(HarnessError("cannot create \(dir.path): \(error)"))
        }
        if dir.path.contains(",") || dir.path.contains(" ") {
            return .failure(
                HarnessError(
                    "temporary directory \(dir.path) has a comma or space; ALSA's file device needs a plain path (set TMPDIR)"
                ))
        }
        scratchToRemove = dir.path
        atexit {
            guard let path = Harness.scratchToRemove else { return }
            Harness.stopSharedDaemon(runtime: path + "/runtime")
            guard ProcessInfo.processInfo.environment["ANNOUNCE_E2E_KEEP"] != "1" else { return }
            try? FileManager.default.removeItem(atPath: path)
        }
        return .success(dir)
    }()

    nonisolated(unsafe) private static var scratchToRemove: String?

    /// `work/runtime`: the ANNOUNCE_RUNTIME_DIR every command of this test process shares.
    static func sharedRuntimeDirectory() throws -> String {
        let path = try workResult.get().appendingPathComponent("runtime").path
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw HarnessError("cannot create \(path)") }
        return path
    }

    /// Stops the daemon that holds `runtime`/daemon.lock, if one does (SIGTERM, SIGKILL after 5 s),
    /// and returns once it released the lock: the scratch directory is removed after it, and a
    /// daemon still writing its outcome files would leave some behind.
    static func stopSharedDaemon(runtime: String) {
        let fd = open(runtime + "/daemon.lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // Free: no daemon runs (and the pid in the file may belong to someone else by now).
        guard flock(fd, LOCK_EX | LOCK_NB) != 0, let pid = daemonPID(runtime: runtime) else { return }
        let released = DispatchSemaphore(value: 0)
        Thread {
            while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
            released.signal()
        }.start()
        kill(pid, SIGTERM)
        if released.wait(timeout: .now() + 5) == .timedOut {
            kill(pid, SIGKILL)
            _ = released.wait(timeout: .now() + 5)
        }
    }

    /// The pid a daemon wrote into its lock file in `runtime`, if one ran.
    static func daemonPID(runtime: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: runtime + "/daemon.lock", encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Fixtures generated once per test process by Tests/Shell/make-fixtures.sh.
    static let fixturesResult: Result<URL, HarnessError> = {
        let work: URL
        switch workResult {
        case .success(let url): work = url
        case .failure(let error): return .failure(error)
        }
        let dir = work.appendingPathComponent("fixtures")
        // Made ahead by `make test` (ANNOUNCE_TEST_FIXTURES, a fresh directory on the same file
        // system): moved in, not made here, where every test that wants one would block a thread
        // of the cooperative pool until the script ends (seen: the whole run stalled for 39 s).
        if let made = ProcessInfo.processInfo.environment["ANNOUNCE_TEST_FIXTURES"], !made.isEmpty,
            rename(made, dir.path) == 0
        {
            chmod(dir.path, 0o755)
            return .success(dir)
        }
        let script = repoRoot.appendingPathComponent("Tests/Shell/make-fixtures.sh").path
        let log = work.appendingPathComponent("make-fixtures.log").path
        let status: Int32?
        do {
            status = try ChildProcess(
                "make-fixtures.sh", ["/bin/bash", script, dir.path],
                environment: ProcessInfo.processInfo.environment, stdout: log, stderr: log
            )
            .waitForExit(timeout: 600)
        } catch {
            return .failure(HarnessError("cannot run \(script): \(error)"))
        }
        guard status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return .failure(
                HarnessError(
                    "\(script) failed (\(status.map { "status \($0)" } ?? "no exit within 600 s")):\n\(output)"))
        }
        chmod(dir.path, 0o755)
        chmod(dir.appendingPathComponent("bad").path, 0o755)
        return .success(dir)
    }()

    static func fixtures() throws -> URL { try fixturesResult.get() }

    /// A world-readable copy of the binary in the scratch directory, for running it as an
    /// unprivileged user wherever the repository is checked out.
    static let sharedBinaryResult: Result<String, HarnessError> = {
        do {
            let source = try binary()
            let bin = try workResult.get().appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let copy = bin.appendingPathComponent("announce")
            try FileManager.default.copyItem(atPath: source, toPath: copy.path)
            chmod(bin.path, 0o755)
            chmod(copy.path, 0o755)
            return .success(copy.path)
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("cannot copy the binary for an unprivileged user: \(error)"))
        }
    }()

    /// Absolute path of a fixture, e.g. `fixture("wav16-stereo.wav")` or `fixture("bad/empty.wav")`.
    static func fixture(_ name: String) throws -> String {
        try fixtures().appendingPathComponent(name).path
    }

    /// A fresh capture file path for ALSA's file device (not created).
    static func capturePath(_ label: String = "capture") throws -> String {
        let safe = label.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }
        return try workResult.get().appendingPathComponent("captures/\(String(safe))-\(UUID().uuidString).wav").path
    }

    static func fileDevice(_ capture: String) -> String { "file:FILE=\(capture),FORMAT=wav" }

    /// What every test's config file holds first: plays keep the files' own level, so that
    /// captures compare with the files sample for sample (the loudness tests give their own).
    static let baseConfig = "loudness = off\n"

    /// An XDG_CONFIG_HOME whose announce config is `baseConfig` alone: every other default holds.
    static let baseConfigHome: String = {
        let home = ((try? workResult.get().path) ?? "/nonexistent") + "/base-config-home"
        try? FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
        try? baseConfig.write(toFile: home + "/announce/config", atomically: true, encoding: .utf8)
        return home
    }()

    /// The environment of every process a test starts: this process's without ANNOUNCE_LOG, the
    /// shared runtime directory, no user config; then `overrides` (a nil value removes a variable).
    static func environment(_ overrides: [String: String?] = [:]) throws -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ANNOUNCE_LOG")
        // One daemon for this test process, in its own runtime directory, stopped at exit.
        env["ANNOUNCE_RUNTIME_DIR"] = try sharedRuntimeDirectory()
        // Hermetic: the user's own config file (quiet hours, device) must not reach the tests.
        env["XDG_CONFIG_HOME"] = baseConfigHome
        // Hermetic too: a daemon under test joins no user's session bus (it would pause their
        // players); the MPRIS tests give their private bus's address.
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/announce-tests-have-no-session-bus"
        for (key, value) in overrides { env[key] = value }
        return env
    }
}

/// How a process ended and what it printed.
struct Outcome: Sendable, CustomStringConvertible {
    var status: Int32
    /// Set when the process was killed by a signal (a crash, or our timeout).
    var signal: Int32?
    var stdout: String
    var stderr: String

    /// stderr split into lines (a trailing newline does not make an extra empty line).
    var stderrLines: [String] {
        var lines = stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    var description: String {
        let how = signal.map { "killed by signal \($0)" } ?? "exit \(status)"
        return "\(how); stdout: \(stdout.debugDescription); stderr: \(stderr.debugDescription)"
    }
}

enum Runner {
    /// Longest any single command may take; clips are about a second and the file device is not paced.
    static let timeoutSeconds = 30.0

    /// Runs `executable` with `arguments` (a ChildProcess: stdin from /dev/null, stdout and stderr
    /// to files, so stderr is never a TTY) in `Harness.environment(environment)`.
    /// After `killAfter` seconds it is killed and the outcome says "killed by signal 9" (for a
    /// command that might hang); without it, a command still running after `timeoutSeconds` is a
    /// harness error.
    static func run(
        _ executable: String, _ arguments: [String],
        environment: [String: String?] = [:], killAfter: Double? = nil, stdin: String = "/dev/null"
    ) async throws -> Outcome {
        let env = try Harness.environment(environment)
        let work = try Harness.workResult.get()
        let id = UUID().uuidString
        let outPath = work.appendingPathComponent("captures/\(id).stdout").path
        let errPath = work.appendingPathComponent("captures/\(id).stderr").path
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let child = try ChildProcess(
            (executable as NSString).lastPathComponent, [executable] + arguments,
            environment: env, stdout: outPath, stderr: errPath, stdin: stdin)
        let limit = killAfter ?? timeoutSeconds
        let finished = await child.exited(within: limit)
        if !finished {
            child.signal(SIGKILL)
            _ = await child.exited(within: 10)
        }
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "<not UTF-8>"
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "<not UTF-8>"
        if !finished && killAfter == nil {
            throw HarnessError(
                "`\(([executable] + arguments).joined(separator: " "))` did not finish within \(Int(limit)) s; killed. stderr: \(stderr)"
            )
        }
        let signal = child.terminatingSignal
        return Outcome(
            status: child.exitStatus ?? signal.map { 128 + $0 } ?? -1, signal: signal, stdout: stdout, stderr: stderr)
    }

    /// `announce ARGS...` (or `executable ARGS...`) started now, not when a task gets a thread of
    /// the cooperative pool (a loaded test run may keep them all busy for long): its outcome is
    /// awaited later.
    static func launch(
        _ arguments: [String], executable: String? = nil, environment: [String: String?] = [:], killAfter: Double
    ) throws -> Launched {
        let work = try Harness.workResult.get()
        let id = UUID().uuidString
        let out = work.appendingPathComponent("captures/\(id).stdout").path
        let err = work.appendingPathComponent("captures/\(id).stderr").path
        let executable = try executable ?? Harness.binary()
        let child = try ChildProcess(
            (executable as NSString).lastPathComponent, [executable] + arguments,
            environment: try Harness.environment(environment), stdout: out, stderr: err, stdin: "/dev/null")
        return Launched(child: child, outPath: out, errPath: err, killAfter: killAfter)
    }

    /// A command `launch` started.
    final class Launched: Sendable {
        let child: ChildProcess
        let outPath: String
        let errPath: String
        let killAfter: Double

        init(child: ChildProcess, outPath: String, errPath: String, killAfter: Double) {
            self.child = child
            self.outPath = outPath
            self.errPath = errPath
            self.killAfter = killAfter
        }

        /// How it ended (killed after `killAfter` seconds, as `announce(killAfter:)`).
        func outcome() async -> Outcome {
            if !(await child.exited(within: killAfter)) {
                child.signal(SIGKILL)
                _ = await child.exited(within: 10)
            }
            defer {
                unlink(outPath)
                unlink(errPath)
            }
            let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "<not UTF-8>"
            let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "<not UTF-8>"
            let signal = child.terminatingSignal
            return Outcome(
                status: child.exitStatus ?? signal.map { 128 + $0 } ?? -1, signal: signal, stdout: stdout,
                stderr: stderr)
        }
    }

    /// `announce ARGS...`, reading `stdin`.
    static func announce(
        _ arguments: [String], environment: [String: String?] = [:],
        killAfter: Double? = nil, stdin: String = "/dev/null"
    ) async throws -> Outcome {
        try await run(Harness.binary(), arguments, environment: environment, killAfter: killAfter, stdin: stdin)
    }
}
