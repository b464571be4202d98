import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The private, real-time paced PulseAudio of Tests/Shell/paced-audio.sh (a null sink at 48 kHz, ALSA
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

    static let script = Harness.repoRoot.appendingPathComponent("Tests/Shell/paced-audio.sh").path

    private init(directory: String, environment: [String: String], clips: PacedClips) {
        self.directory = directory
        self.environment = environment
        self.clips = clips
    }

    /// Runs `Tests/Shell/paced-audio.sh up` in a fresh directory and makes the clips. Throws a
    /// HarnessError that says what to install when PulseAudio (or sox) is missing.
    static func up(name: String = "paced") throws -> PacedAudio {
        let work = try Harness.workResult.get()
        let directory = work.appendingPathComponent(name).path
        // The watchdog takes PulseAudio down if this test process dies without doing so.
        let (status, output) = try runScript(["up", directory], extraEnvironment: ["PACED_WATCH_PID": "\(getpid())"])
        guard status == 0 else {
            _ = try? runScript(["down", directory])
            throw HarnessError(
                """
                the paced audio device did not come up (`Tests/Shell/paced-audio.sh up` exit \(status)). \
                These tests need Debian's pulseaudio, pulseaudio-utils, libasound2-plugins and sox \
                (`make test` installs them). Output:
                \(output)
                """)
        }
        Self.started.withLock { $0 = directory }
        guard let text = try? String(contentsOfFile: directory + "/env", encoding: .utf8) else {
            Self.down(directory)
            throw HarnessError("Tests/Shell/paced-audio.sh wrote no \(directory)/env")
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
            if let directory = PacedAudio.started.withLock({ $0 }) {
                _ = try? PacedAudio.runScript(["down", directory])
            }
        }
    }()

    /// `bash Tests/Shell/paced-audio.sh ARGS`: exit status and output. Through `ChildProcess`, so that
    /// PulseAudio and its reader start with default signal handling and no inherited descriptors.
    private static func runScript(_ arguments: [String], extraEnvironment: [String: String] = [:]) throws -> (
        Int32, String
    ) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("paced-audio-\(UUID().uuidString).log")
            .path
        defer { unlink(log) }
        let child = try ChildProcess(
            "paced-audio.sh", ["bash", script] + arguments,
            environment: inheritedEnvironment.merging(extraEnvironment) { $1 },
            stdout: log, stderr: log)
        let status = child.waitForExit(timeout: 60) ?? -1
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }
}

// MARK: a sound server that dies and comes back

extension PacedAudio {
    /// SIGKILLs this suite's PulseAudio (a crashed sound server): every client, the daemon's ALSA
    /// `pulse` device and the session's recorder among them, loses its connection at once.
    func killServer() throws {
        let (status, output) = try Self.runScript(["kill-server", directory])
        guard status == 0 else {
            throw HarnessError("Tests/Shell/paced-audio.sh kill-server: exit \(status): \(output)")
        }
    }

    /// Starts the same server again (same socket, sink and environment) and records its sink's
    /// monitor to `recording` (raw s16le stereo) from before any client can connect to it: a
    /// client retrying the device cannot play a sample that is not recorded. Returns the script's
    /// report line.
    @discardableResult
    func startServer(recording: String) throws -> String {
        let (status, output) = try Self.runScript(["start-server", directory, recording])
        guard status == 0 else {
            throw HarnessError("Tests/Shell/paced-audio.sh start-server: exit \(status): \(output)")
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the recorder `startServer` started; its file is complete then.
    func stopServerRecorder() throws {
        let (status, output) = try Self.runScript(["stop-recorder", directory])
        guard status == 0 else {
            throw HarnessError("Tests/Shell/paced-audio.sh stop-recorder: exit \(status): \(output)")
        }
    }

    /// A raw s16le stereo recording as mono samples (the first channel; the clips have the same
    /// signal in both).
    static func monoSamples(ofRecording path: String) throws -> [Double] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HarnessError("no recording at \(path)")
        }
        return data.withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: samples.count - 1, by: 2).map {
                Double(Int16(littleEndian: samples[$0])) / 32768
            }
        }
    }
}

/// Brings the paced device up around the whole suite and takes it down after it, also when a
/// test fails. If it cannot come up, the suite fails with the reason (it never skips).
struct PacedAudioTrait: SuiteTrait, TestScoping {
    /// The directory under the scratch directory: each suite has its own PulseAudio (a suite may
    /// kill and restart its server), and its sessions still never overlap another's (HeavyLoad).
    var name = "paced"

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        PacedAudio.downAtExit
        try await withServer(up: { [name] in try PacedAudio.up(name: name) }, down: { $0.down() }) { paced in
            try await PacedAudio.$current.withValue(paced) { try await function() }
        }
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
            try Sox.tone(path, frequency: frequency, seconds: seconds, rate: PacedAudio.rate, channels: 2)
            return path
        }
        return PacedClips(
            a3: try tone("a-440-3s.wav", 3.0, aTone), a2: try tone("a-440-2s.wav", 2.0, aTone),
            b: try tone("b-880-0.5s.wav", 0.5, bTone), c: try tone("c-660-0.5s.wav", 0.5, cTone),
            silence: try tone("silence-20ms.wav", 0.02, nil))
    }
}

/// One test's world: its own runtime directory and `announce daemon --device pulse`, an
/// `announce events --json` listener, and `parec` recording the sink's monitor.
final class PacedSession: @unchecked Sendable {
    let paced: PacedAudio
    let directory: String
    /// The runtime directory, with the paced server's PULSE_* and none of the runner's.
    let runtime: DaemonRuntime
    private var daemon: DaemonProcess?
    private var events: ChildProcess?
    private var recorder: ChildProcess?
    private let eventsPath: String
    let recordingPath: String
    private var eventsRead = 0
    private var eventLines: [WireEvent] = []

    /// `environment`: more variables for every process of the session.
    init(_ label: String, environment extra: [String: String] = [:]) throws {
        guard let paced = PacedAudio.current else { throw HarnessError("PacedSession outside PacedAudioTrait") }
        self.paced = paced
        directory = paced.directory + "/" + label
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // None of the runner's PULSE_* (PULSE_SINK, or PULSE_LATENCY_MSEC, which makes drains
        // through the pulse plugin hang): only the paced server's.
        var environment: [String: String?] = [:]
        for key in ProcessInfo.processInfo.environment.keys where key.hasPrefix("PULSE_") {
            environment[key] = .some(nil)
        }
        for (key, value) in paced.environment.merging(extra, uniquingKeysWith: { $1 }) { environment[key] = value }
        runtime = try DaemonRuntime(path: directory + "/runtime", environment: environment)
        eventsPath = directory + "/events.jsonl"
        recordingPath = directory + "/recording.s16"
    }

    /// Starts the daemon on ALSA `pulse` (with `environment` on top of the session's) and the
    /// events listener; returns once the listener is provably subscribed (it saw a 20 ms silent
    /// clip play) and the device is warm.
    func start(environment: [String: String?] = [:]) async throws {
        // --idle-exit: a daemon left behind by a killed test run goes away by itself.
        daemon = try await runtime.startDaemon(
            device: "pulse", arguments: ["--idle-exit", "60s"], environment: environment)
        // `timeout`: a listener left behind by a killed test run ends, and then its daemon
        // (--idle-exit); the watchdog of Tests/Shell/paced-audio.sh takes PulseAudio down.
        events = try ChildProcess(
            "events", ["timeout", "120", try Harness.binary(), "events", "--json"],
            environment: try runtime.resolvedEnvironment(), stdout: eventsPath,
            stderr: directory + "/events.err")
        // Until the listener reports a warm-up's end (it may subscribe after the first one ended).
        for _ in 0..<20 {
            let warmUp = try await announce(["play", paced.clips.silence])
            guard warmUp.status == 0 else {
                throw HarnessError("the warm-up clip did not play on pulse: \(warmUp); \(daemonLog)")
            }
            if (try? await waitForEvent(
                "", timeout: 0.5, { $0.event == "finished" && $0.path == self.paced.clips.silence })) != nil
            {
                return
            }
        }
        throw HarnessError("`announce events --json` reported nothing: \(directory)/events.err; \(daemonLog)")
    }

    var daemonLog: String { daemon?.log ?? "" }

    /// Kills the daemon with SIGKILL, as a crash would, and starts another on `device`.
    func crashDaemon(restartOn device: String) async throws {
        guard let daemon else { throw HarnessError("no daemon to kill") }
        daemon.signal(SIGKILL)
        guard await daemon.waitForExit(timeout: 10) else { throw HarnessError("the daemon outlived SIGKILL") }
        self.daemon = try await runtime.startDaemon(device: device, arguments: ["--idle-exit", "60s"])
    }

    /// `announce ARGS` with this session's environment, waiting for it to exit.
    func announce(_ arguments: [String]) async throws -> Outcome {
        try await runtime.announce(arguments)
    }

    /// Starts `announce ARGS` now; await the task for its outcome.
    func launch(_ arguments: [String]) -> Task<Outcome, any Error> {
        Task { try await self.announce(arguments) }
    }

    /// Queues `path` over the socket to become eligible at `time` (seconds since the epoch, the
    /// daemon's clock), so that the daemon's own timer, not the start-up of a client process,
    /// decides when it preempts. Await the task for the item's `finished` event.
    func schedule(_ path: String, priority: String, at time: Double) async throws -> Task<WireEvent, any Error> {
        let client = try runtime.client()
        let request =
            #"{"v":1,"op":"play","wait":true,"items":[{"clip":{"path":"\#(path)","gain":1,"pan":0,"loops":0},"priority":"\#(priority)","at":\#(time)}]}"#
        let reply = try await offPool { try client.call(request) }
        guard reply.ok, let id = reply.ids?.first else {
            throw HarnessError("play \(path) at \(time) refused: \(reply)")
        }
        return Task {
            let seen = try await offPool {
                try client.events(until: { $0.event == "finished" && $0.id == id }, timeout: 30)
            }
            return seen[seen.count - 1]
        }
    }

    // MARK: events

    /// Every event seen so far.
    func allEvents() -> [WireEvent] {
        guard let data = FileManager.default.contents(atPath: eventsPath), data.count > eventsRead else {
            return eventLines
        }
        let fresh = data[eventsRead...]
        guard let lastNewline = fresh.lastIndex(of: UInt8(ascii: "\n")) else { return eventLines }
        let complete = String(decoding: data[eventsRead...lastNewline], as: UTF8.self)
        eventsRead = lastNewline + 1
        eventLines += complete.split(separator: "\n").compactMap { WireEvent(line: $0) }
        return eventLines
    }

    /// The first event matching `predicate`; throws after `timeout` seconds. The listener writes
    /// to a file, read every 2 ms: what a test times from an event is the event's own `time`.
    func waitForEvent(
        _ what: String, timeout: Double = 10,
        _ predicate: @escaping (WireEvent) -> Bool
    ) async throws -> WireEvent {
        let deadline = monotonicNow() + timeout
        while true {
            if let event = allEvents().first(where: predicate) { return event }
            guard monotonicNow() < deadline else {
                throw HarnessError("no \(what) within \(timeout) s; events: \(allEvents()); daemon log: \(daemonLog)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The first event of `kind` for the clip at `path`, if any.
    func event(_ kind: String, path: String) -> WireEvent? {
        allEvents().first { $0.event == kind && $0.path == path }
    }

    // MARK: recording

    /// Starts recording what the sink plays (its monitor), as raw s16le stereo at 48 kHz.
    func startRecording() throws {
        recorder = try ChildProcess(
            "recorder",
            [
                "parec", "--raw", "--format=s16le", "--rate=\(PacedAudio.rate)", "--channels=2",
                "--latency-msec=10", "-d", paced.sink + ".monitor"
            ],
            environment: try runtime.resolvedEnvironment(), stdout: recordingPath,
            stderr: directory + "/parec.err")
    }

    /// Records `tail` seconds more (the thing observed: nothing may sound after the clients
    /// exited), stops the recorder and returns the recording as mono samples (the clips have
    /// the same signal in both channels).
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
            return stride(from: 0, to: samples.count - 1, by: 2).map {
                Double(Int16(littleEndian: samples[$0])) / 32768
            }
        }
    }

    /// Stops the recorder and the listener, then every daemon of the runtime directory: only
    /// the processes this session started.
    func close() async {
        recorder?.stop()
        events?.stop()
        recorder = nil
        events = nil
        await runtime.cleanup()
        daemon = nil
    }
}

/// Runs `body` with a fresh session (not started) and always closes it, also when it throws;
/// never while a test that loads the machine hard runs (HeavyLoad).
func withPacedSession(_ label: String, environment: [String: String] = [:], _ body: (PacedSession) async throws -> Void)
    async throws
{
    try await HeavyLoad.exclusively {
        let session = try PacedSession(label, environment: environment)
        do {
            try await body(session)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
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

    /// The tones in the order heard, with where each starts and ends (ToneAnalysis.segments:
    /// runs shorter than `minimum` windows, a boundary window or the quiet start of a fade-in,
    /// are left out, and the same tone either side of a short silence is one segment).
    ///
    /// ToneAnalysis's default threshold (power 0.001, about 6% of the clips' amplitude of 0.5)
    /// counts a window once a few percent of it sounds: each edge reads at most a few ms
    /// long, and a 50 ms fade-in loses its first ~3 ms.
    static func segments(_ samples: [Double], tones: [Double] = PacedClips.tones, minimum: Int = 3) -> [ToneSegment] {
        let timeline = ToneAnalysis.timeline(samples, rate: Double(PacedAudio.rate), tones: tones, window: window)
        return ToneAnalysis.segments(timeline, minimum: minimum).map {
            ToneSegment(
                tone: $0.tone, start: Double($0.windows.lowerBound) * window,
                end: Double($0.windows.upperBound) * window)
        }
    }
}
