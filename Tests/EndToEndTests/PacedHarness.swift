import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The private, real-time paced PulseAudio of tests/paced-audio.sh (a null sink at 48 kHz, ALSA
/// device `pulse`), brought up once for the suite that carries `PacedAudioTrait`, with the test clips.
final class PacedAudio: Sendable {
    /// Where the script keeps its sockets, pids and logs; clips/ and the per-test sessions live here too.
    let directory: String
    /// PULSE_SERVER etc., from DIR/env: every process of a test gets them.
    let environment: [String: String]
    let clips: PacedClips

    var sink: String { environment["PACED_SINK"] ?? "announce_paced" }
    static let rate = 48000

    /// The instance for the suite running now (set by `PacedAudioTrait`).
    @TaskLocal static var current: PacedAudio?

    static let script = Harness.repoRoot.appendingPathComponent("tests/paced-audio.sh").path

    private init(directory: String, environment: [String: String], clips: PacedClips) {
        self.directory = directory
        self.environment = environment
        self.clips = clips
    }

    /// Runs `tests/paced-audio.sh up` in a fresh directory and makes the clips. Throws a
    /// HarnessError that says what to install when PulseAudio (or sox) is missing.
    static func up() throws -> PacedAudio {
        let work = try Harness.workResult.get()
        let directory = work.appendingPathComponent("paced").path
        // The watchdog takes PulseAudio down if this test process dies without doing so.
        let (status, output) = try runScript(["up", directory], extraEnvironment: ["PACED_WATCH_PID": "\(getpid())"])
        guard status == 0 else {
            _ = try? runScript(["down", directory])
            throw HarnessError("""
                the paced audio device did not come up (`tests/paced-audio.sh up` exit \(status)). \
                These tests need Debian's pulseaudio, pulseaudio-utils, libasound2-plugins and sox \
                (`make test` installs them). Output:
                \(output)
                """)
        }
        Self.started.withLock { $0 = directory }
        guard let text = try? String(contentsOfFile: directory + "/env", encoding: .utf8) else {
            Self.down(directory)
            throw HarnessError("tests/paced-audio.sh wrote no \(directory)/env")
        }
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let match = line.wholeMatch(of: /export ([A-Z_]+)=(.*)/) else { continue }
            environment[String(match.1)] = String(match.2)
        }
        do {
            let clips = try PacedClips.make(in: directory + "/clips")
            return PacedAudio(directory: directory, environment: environment, clips: clips)
        } catch {
            Self.down(directory)
            throw error
        }
    }

    func down() { Self.down(directory) }

    /// This process's environment without PULSE_* (a developer's own PulseAudio settings).
    static var inheritedEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PULSE_") }
    }

    /// Prints a measurement line at once (stdout is a pipe under `swift test`).
    static func report(_ line: String) {
        print(line)
        fflush(nil)  // every stream: `stdout` itself is not concurrency-safe to name
    }

    private static let started = Mutex<String?>(nil)

    static func down(_ directory: String) {
        _ = try? runScript(["down", directory])
        started.withLock { if $0 == directory { $0 = nil } }
    }

    /// Also at exit, in case a test run ends without the trait's teardown (the watchdog covers a kill).
    static let downAtExit: Void = {
        atexit {
            if let directory = PacedAudio.started.withLock({ $0 }) { _ = try? PacedAudio.runScript(["down", directory]) }
        }
    }()

    /// `bash tests/paced-audio.sh ARGS`: exit status and output. Through `ChildProcess`, so that
    /// PulseAudio and its reader start with default signal handling and no inherited descriptors.
    private static func runScript(_ arguments: [String], extraEnvironment: [String: String] = [:]) throws -> (Int32, String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("paced-audio-\(UUID().uuidString).log").path
        defer { unlink(log) }
        let child = try ChildProcess("paced-audio.sh", ["bash", script] + arguments,
                                     environment: inheritedEnvironment.merging(extraEnvironment) { $1 },
                                     stdout: log, stderr: log)
        let status = child.waitForExit(timeout: 60) ?? -1
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }
}

/// Brings the paced device up around the whole suite and takes it down after it, also when a
/// test fails. If it cannot come up, the suite fails with the reason (it never skips).
struct PacedAudioTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        PacedAudio.downAtExit
        let paced = try PacedAudio.up()
        defer { paced.down() }
        try await PacedAudio.$current.withValue(paced) { try await function() }
    }
}

/// Pure sine tones at -6 dBFS (amplitude 0.5), 48 kHz stereo 16-bit, made with sox.
struct PacedClips: Sendable {
    /// 440 Hz, 3.0 s.
    var a3: String
    /// 440 Hz, 2.0 s.
    var a2: String
    /// 880 Hz, 0.5 s.
    var b: String
    /// 660 Hz, 0.5 s.
    var c: String
    /// 20 ms of silence: proves the events subscription before a test begins.
    var silence: String

    static let aTone = 440.0, bTone = 880.0, cTone = 660.0
    static let tones = [aTone, bTone, cTone]

    static func make(in directory: String) throws -> PacedClips {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func tone(_ name: String, _ seconds: Double, _ frequency: Double?) throws -> String {
            let path = directory + "/" + name
            let synth = frequency.map { ["synth", "\(seconds)", "sine", "\($0)", "gain", "-6"] } ?? ["trim", "0", "\(seconds)"]
            let sox = try ChildProcess("sox", ["sox", "-R", "-D", "-V1", "-n", "-r", "\(PacedAudio.rate)", "-c", "2", "-b", "16", path] + synth,
                                       environment: ProcessInfo.processInfo.environment, stdout: "/dev/null", stderr: "/dev/null")
            let status = sox.waitForExit(timeout: 30)
            guard status == 0, FileManager.default.fileExists(atPath: path) else {
                throw HarnessError("sox could not make \(path) (exit \(status.map(String.init) ?? "none")); install sox")
            }
            return path
        }
        return PacedClips(a3: try tone("a-440-3s.wav", 3.0, aTone), a2: try tone("a-440-2s.wav", 2.0, aTone),
                          b: try tone("b-880-0.5s.wav", 0.5, bTone), c: try tone("c-660-0.5s.wav", 0.5, cTone),
                          silence: try tone("silence-20ms.wav", 0.02, nil))
    }
}

/// One event line of `announce events --json`.
struct PacedEvent: Sendable, CustomStringConvertible {
    var kind: String
    var time: Double
    var id: String?
    var path: String?
    var heard: Double?
    var outcome: String?
    var reason: String?

    init?(_ line: Substring) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let kind = object["event"] as? String, let time = object["time"] as? Double else { return nil }
        self.kind = kind
        self.time = time
        id = object["id"] as? String
        path = object["path"] as? String
        heard = (object["heard"] as? NSNumber)?.doubleValue
        let outcome = object["outcome"] as? [String: Any]
        self.outcome = outcome?["kind"] as? String
        reason = outcome?["reason"] as? String ?? object["reason"] as? String
    }

    var description: String {
        "\(kind) \(path.map { ($0 as NSString).lastPathComponent } ?? "") t=\(time)"
            + (heard.map { " heard=\($0)" } ?? "") + (outcome.map { " \($0)" } ?? "") + (reason.map { " (\($0))" } ?? "")
    }
}

/// A child process started with posix_spawn and waited for with waitpid, stopped by its pid
/// (and only that pid). Not Foundation's Process, whose children inherit the test runner's
/// blocked signal mask (a SIGTERM to parec or to a shell then does nothing) and which learns of
/// an exit from EOF on a socket that every grandchild inherits (PulseAudio started by the script
/// would hang `waitUntilExit` until PulseAudio exits).
final class ChildProcess: @unchecked Sendable {
    let name: String
    let pid: pid_t
    private var status: Int32?
    private var reaped = false

    /// Runs `arguments` (argv[0] looked up in PATH) with stdin from /dev/null, stdout and
    /// stderr appended to the given files (one file when they are the same), default signal
    /// handling and nothing open above descriptor 2.
    init(_ name: String, _ arguments: [String], environment: [String: String], stdout: String, stderr: String) throws {
        self.name = name
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
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
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] { sigaddset(&defaults, signal) }
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
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which Swift's Glibc module does not export.
    private static func addCloseFrom3(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }

    /// Reaps the child if it has exited; true while it runs.
    var isRunning: Bool {
        guard !reaped else { return false }
        var raw: Int32 = 0
        let result = waitpid(pid, &raw, WNOHANG)
        if result == 0 { return true }
        reaped = true
        // Exit status, or 128 + N for signal N; unknown (-1) if someone else reaped it.
        if result == pid { status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f) }
        return false
    }

    /// The exit status once it exits (-1 if unknown), nil after `timeout` seconds.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline { return nil }
            usleep(2000)
        }
        return status ?? -1
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; reaps it.
    func stop(grace: Double = 3) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if waitForExit(timeout: grace) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: 10)
        }
    }
}

/// One test's world: its own runtime directory and `announce daemon --device pulse`, an
/// `announce events --json` listener, and `parec` recording the sink's monitor.
final class PacedSession: @unchecked Sendable {
    let paced: PacedAudio
    let directory: String
    let runtime: String
    /// The test process's environment with the PulseAudio variables and this runtime directory.
    let environment: [String: String]
    private var daemon: ChildProcess?
    private var events: ChildProcess?
    private var recorder: ChildProcess?
    private let eventsPath: String
    let recordingPath: String
    private var eventsRead = 0
    private var eventLines: [PacedEvent] = []

    init(_ label: String) throws {
        guard let paced = PacedAudio.current else { throw HarnessError("PacedSession outside PacedAudioTrait") }
        self.paced = paced
        directory = paced.directory + "/" + label
        runtime = directory + "/runtime"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard mkdir(runtime, 0o700) == 0 else { throw HarnessError("cannot create \(runtime)") }
        // None of the runner's PULSE_* (PULSE_SINK, or PULSE_LATENCY_MSEC, which makes drains
        // through the pulse plugin hang): only the paced server's.
        var environment = PacedAudio.inheritedEnvironment
        environment.removeValue(forKey: "ANNOUNCE_LOG")
        for (key, value) in paced.environment { environment[key] = value }
        environment["ANNOUNCE_RUNTIME_DIR"] = runtime
        environment["XDG_CONFIG_HOME"] = Harness.noConfigHome  // the user's quiet hours must not apply
        self.environment = environment
        eventsPath = directory + "/events.jsonl"
        recordingPath = directory + "/recording.s16"
    }

    /// Starts the daemon on ALSA `pulse` and the events listener; returns once the listener
    /// is provably subscribed (it saw a 20 ms silent clip play) and the device is warm.
    func start() async throws {
        let binary = try Harness.binary()
        let log = directory + "/daemon.log"
        // --idle-exit: a daemon left behind by a killed test run goes away by itself.
        daemon = try ChildProcess("daemon", [binary, "daemon", "--device", "pulse", "--idle-exit", "60s"],
                                  environment: environment, stdout: log, stderr: log)
        let deadline = Date().addingTimeInterval(10)
        while !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("listening on") {
            guard daemon!.isRunning else { throw HarnessError("the daemon exited at start: \(daemonLog)") }
            guard Date() < deadline else { throw HarnessError("the daemon did not listen within 10 s: \(daemonLog)") }
            try await Task.sleep(for: .milliseconds(5))
        }
        // `timeout`: a listener left behind by a killed test run ends, and then its daemon
        // (--idle-exit); the watchdog of tests/paced-audio.sh takes PulseAudio down.
        events = try ChildProcess("events", ["timeout", "120", binary, "events", "--json"],
                                  environment: environment, stdout: eventsPath, stderr: directory + "/events.err")
        // Until the listener reports a warm-up's end (it may subscribe after the first one ended).
        for _ in 0..<20 {
            let warmUp = try await announce(["play", paced.clips.silence])
            guard warmUp.status == 0 else { throw HarnessError("the warm-up clip did not play on pulse: \(warmUp); \(daemonLog)") }
            if (try? await waitForEvent("", timeout: 0.5, { $0.kind == "finished" && $0.path == self.paced.clips.silence })) != nil {
                return
            }
        }
        throw HarnessError("`announce events --json` reported nothing: \(directory)/events.err; \(daemonLog)")
    }

    var daemonLog: String { (try? String(contentsOfFile: directory + "/daemon.log", encoding: .utf8)) ?? "" }

    /// `announce ARGS` with this session's environment, waiting for it to exit.
    func announce(_ arguments: [String]) async throws -> Outcome {
        try await Runner.announce(arguments, environment: environment.mapValues { Optional($0) })
    }

    /// Starts `announce ARGS` now; await the task for its outcome.
    func launch(_ arguments: [String]) -> Task<Outcome, any Error> {
        Task { try await self.announce(arguments) }
    }

    // MARK: events

    /// Every event seen so far.
    func allEvents() -> [PacedEvent] {
        guard let data = FileManager.default.contents(atPath: eventsPath), data.count > eventsRead else { return eventLines }
        let fresh = data[eventsRead...]
        guard let lastNewline = fresh.lastIndex(of: UInt8(ascii: "\n")) else { return eventLines }
        let complete = String(decoding: data[eventsRead...lastNewline], as: UTF8.self)
        eventsRead = lastNewline + 1
        eventLines += complete.split(separator: "\n").compactMap(PacedEvent.init)
        return eventLines
    }

    /// The first event matching `predicate`, polled every 2 ms; throws after `timeout` seconds.
    func waitForEvent(_ what: String, timeout: Double = 10,
                      _ predicate: @escaping (PacedEvent) -> Bool) async throws -> PacedEvent {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let event = allEvents().first(where: predicate) { return event }
            guard Date() < deadline else {
                throw HarnessError("no \(what) within \(timeout) s; events: \(allEvents()); daemon log: \(daemonLog)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The first event of `kind` for the clip at `path`, if any.
    func event(_ kind: String, path: String) -> PacedEvent? {
        allEvents().first { $0.kind == kind && $0.path == path }
    }

    // MARK: recording

    /// Starts recording what the sink plays (its monitor), as raw s16le stereo at 48 kHz.
    func startRecording() throws {
        recorder = try ChildProcess("recorder", ["parec", "--raw", "--format=s16le", "--rate=\(PacedAudio.rate)", "--channels=2",
                                                 "--latency-msec=10", "-d", paced.sink + ".monitor"],
                                    environment: environment, stdout: recordingPath, stderr: directory + "/parec.err")
    }

    /// Waits `tail` seconds (so anything played late is in), stops the recorder and returns
    /// the recording as mono samples (the clips have the same signal in both channels).
    func stopRecording(tail: Double = 0.3) async throws -> [Double] {
        try await Task.sleep(for: .seconds(tail))
        guard let recorder else { throw HarnessError("not recording") }
        recorder.stop()
        self.recorder = nil
        guard let data = FileManager.default.contents(atPath: recordingPath) else {
            throw HarnessError("no recording at \(recordingPath)")
        }
        return data.withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: samples.count - 1, by: 2).map { Double(Int16(littleEndian: samples[$0])) / 32768 }
        }
    }

    /// Stops the recorder, the listener and the daemon: only the processes this session started.
    func close() {
        recorder?.stop()
        events?.stop()
        daemon?.stop()
        recorder = nil
        events = nil
        daemon = nil
    }
}

/// A stretch of the recording where one test tone sounds.
struct ToneSegment: Sendable, CustomStringConvertible {
    var tone: Double
    /// Seconds from the start of the recording.
    var start: Double
    var end: Double
    var length: Double { end - start }

    var description: String {
        "\(Int(tone)) Hz \(PacedAnalysis.ms(start))–\(PacedAnalysis.ms(end)) (\(PacedAnalysis.ms(length)))"
    }
}

enum PacedAnalysis {
    /// "1234 ms".
    static func ms(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1000) }

    /// 5 ms Goertzel windows (240 samples): edges to within a few ms, and 440/660/880 Hz still
    /// apart (each is more than the 200 Hz half-width of the window's main lobe from the next).
    static let window = 0.005

    /// The tones in the order heard, with where each starts and ends. Runs shorter than
    /// `minimum` windows (a boundary window, the quiet start of a fade-in) are left out, and
    /// the same tone either side of a short silence is one segment.
    ///
    /// ToneAnalysis's default threshold (power 0.001, about 6% of the clips' amplitude of 0.5)
    /// counts a window once a few percent of it sounds: each edge reads at most a few ms
    /// long, and a 50 ms fade-in loses its first ~3 ms.
    static func segments(_ samples: [Double], tones: [Double] = PacedClips.tones, minimum: Int = 3) -> [ToneSegment] {
        let timeline = ToneAnalysis.timeline(samples, rate: Double(PacedAudio.rate), tones: tones, window: window)
        var segments: [ToneSegment] = []
        var index = 0
        for run in ToneAnalysis.runs(timeline) {
            defer { index += run.windows }
            guard let tone = run.tone, run.windows >= minimum else { continue }
            let start = Double(index) * window, end = Double(index + run.windows) * window
            if let last = segments.last, last.tone == tone {
                segments[segments.count - 1].end = end
            } else {
                segments.append(ToneSegment(tone: tone, start: start, end: end))
            }
        }
        return segments
    }
}
