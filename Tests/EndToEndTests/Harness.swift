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
        let path = ProcessInfo.processInfo.environment["ANNOUNCE_BIN"].flatMap { $0.isEmpty ? nil : $0 }
            ?? repoRoot.appendingPathComponent(".build/debug/announce").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return .failure(HarnessError(
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
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("captures"),
                                                    withIntermediateDirectories: true)
            // Readable by everyone: one test runs the binary as an unprivileged user.
            for path in [dir.path, dir.appendingPathComponent("captures").path] { chmod(path, 0o755) }
        } catch {
            return .failure(HarnessError("cannot create \(dir.path): \(error)"))
        }
        if dir.path.contains(",") || dir.path.contains(" ") {
            return .failure(HarnessError("temporary directory \(dir.path) has a comma or space; ALSA's file device needs a plain path (set TMPDIR)"))
        }
        scratchToRemove = dir.path
        atexit {
            if let path = Harness.scratchToRemove, let pid = Harness.daemonPID(runtime: path + "/runtime") { kill(pid, SIGTERM) }
            guard let path = Harness.scratchToRemove,
                  ProcessInfo.processInfo.environment["ANNOUNCE_E2E_KEEP"] != "1" else { return }
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

    /// The pid a daemon wrote into its lock file in `runtime`, if one ran.
    static func daemonPID(runtime: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: runtime + "/daemon.lock", encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Fixtures generated once per test process by tests/make-fixtures.sh.
    static let fixturesResult: Result<URL, HarnessError> = {
        let work: URL
        switch workResult {
        case .success(let url): work = url
        case .failure(let error): return .failure(error)
        }
        let dir = work.appendingPathComponent("fixtures")
        let script = repoRoot.appendingPathComponent("tests/make-fixtures.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, dir.path]
        let log = work.appendingPathComponent("make-fixtures.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        do {
            let handle = try FileHandle(forWritingTo: log)
            defer { try? handle.close() }
            process.standardOutput = handle
            process.standardError = handle
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
        } catch {
            return .failure(HarnessError("cannot run \(script): \(error)"))
        }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return .failure(HarnessError("\(script) failed (status \(process.terminationStatus)):\n\(output)"))
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

    /// An XDG_CONFIG_HOME with no announce config in it, so every command sees the defaults.
    static var noConfigHome: String {
        ((try? workResult.get().path) ?? "/nonexistent") + "/no-config-home"
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

    /// Runs `executable` with `arguments`, stdin from /dev/null, stdout and stderr to files
    /// (so stderr is never a TTY). `environment` entries override the inherited ones; a nil
    /// value removes the variable. ANNOUNCE_LOG is never inherited.
    static func run(_ executable: String, _ arguments: [String],
                    environment: [String: String?] = [:]) async throws -> Outcome {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ANNOUNCE_LOG")
        let work = try Harness.workResult.get()
        // One daemon for this test process, in its own runtime directory, stopped at exit.
        env["ANNOUNCE_RUNTIME_DIR"] = try Harness.sharedRuntimeDirectory()
        // Hermetic: the user's own config file (quiet hours, device) must not reach the tests.
        env["XDG_CONFIG_HOME"] = Harness.noConfigHome
        for (key, value) in environment { env[key] = value }

        let id = UUID().uuidString
        let outURL = work.appendingPathComponent("captures/\(id).stdout")
        let errURL = work.appendingPathComponent("captures/\(id).stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle

        let state = RunState()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            process.terminationHandler = { _ in
                state.finished = true
                continuation.resume()
            }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                state.launchError = "\(error)"
                continuation.resume()
                return
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds) {
                guard !state.finished else { return }
                state.fired = true
                kill(pid, SIGKILL)
            }
        }
        try? outHandle.close()
        try? errHandle.close()
        if let launchError = state.launchError {
            throw HarnessError("cannot run \(executable): \(launchError)")
        }
        let stdout = (try? String(contentsOf: outURL, encoding: .utf8)) ?? "<not UTF-8>"
        let stderr = (try? String(contentsOf: errURL, encoding: .utf8)) ?? "<not UTF-8>"
        if state.fired {
            throw HarnessError("`\(([executable] + arguments).joined(separator: " "))` did not finish within \(Int(timeoutSeconds)) s; killed. stderr: \(stderr)")
        }
        let signalled = process.terminationReason == .uncaughtSignal
        return Outcome(status: process.terminationStatus, signal: signalled ? process.terminationStatus : nil,
                       stdout: stdout, stderr: stderr)
    }

    /// `announce ARGS...`.
    static func announce(_ arguments: [String], environment: [String: String?] = [:]) async throws -> Outcome {
        try await run(Harness.binary(), arguments, environment: environment)
    }
}

/// A few flags shared between the waiting task and the timeout.
private final class RunState: @unchecked Sendable {
    private let lock = NSLock()
    private var _finished = false, _fired = false, _launchError: String?
    var finished: Bool {
        get { lock.withLock { _finished } }
        set { lock.withLock { _finished = newValue } }
    }
    var fired: Bool {
        get { lock.withLock { _fired } }
        set { lock.withLock { _fired = newValue } }
    }
    var launchError: String? {
        get { lock.withLock { _launchError } }
        set { lock.withLock { _launchError = newValue } }
    }
}
