import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A private sound server with a null sink that other applications (paplay) and announce (ALSA
/// `pulse`) both play to, for the tests that reach other applications (issue 15): PulseAudio
/// (Tests/Shell/paced-audio.sh) or PipeWire with WirePlumber and pipewire-pulse
/// (Tests/Shell/pipewire-audio.sh). Both scripts write the same DIR/env.
struct OtherAudioServer: Sendable {
    enum Kind: String, Sendable { case pulseAudio = "PulseAudio", pipeWire = "PipeWire" }

    let kind: Kind
    let directory: String
    /// PULSE_SERVER etc. (and XDG_RUNTIME_DIR for PipeWire): every process of a test gets them.
    let environment: [String: String]
    var sink: String { environment["PACED_SINK"] ?? "" }
    var script: String {
        Harness.repoRoot.appendingPathComponent(
            kind == .pulseAudio ? "Tests/Shell/paced-audio.sh" : "Tests/Shell/pipewire-audio.sh"
        ).path
    }

    /// Starts the server in a fresh directory under the scratch directory; a watchdog takes it down
    /// if this test process dies. Throws, saying what to install, when it cannot start.
    static func up(_ kind: Kind, name: String) throws -> OtherAudioServer {
        let directory = try Harness.workResult.get().appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: directory)
        let server = OtherAudioServer(kind: kind, directory: directory, environment: [:])
        let (status, output) = try server.run(["up", directory], extra: ["PACED_WATCH_PID": "\(getpid())"])
        guard status == 0, let text = try? String(contentsOfFile: directory + "/env", encoding: .utf8) else {
            _ = try? server.run(["down", directory])
            throw HarnessError(
                "the private \(kind.rawValue) did not come up (\(server.script) up: exit \(status)): \(output)")
        }
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let match = line.wholeMatch(of: /export ([A-Z_]+)=(.*)/) else { continue }
            environment[String(match.1)] = String(match.2)
        }
        PacedAudio.report(output.trimmingCharacters(in: .whitespacesAndNewlines))
        return OtherAudioServer(kind: kind, directory: directory, environment: environment)
    }

    func down() { _ = try? run(["down", directory]) }

    private func run(_ arguments: [String], extra: [String: String] = [:]) throws -> (Int32, String) {
        let log = directory + ".script.log"
        defer { unlink(log) }
        let child = try ChildProcess(
            "sound server script", ["bash", script] + arguments,
            environment: PacedAudio.inheritedEnvironment.merging(extra) { $1 }, stdout: log, stderr: log)
        let status = child.waitForExit(timeout: 60) ?? -1
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// The environment of a process that plays to this server: none of the runner's PULSE_*.
    var processEnvironment: [String: String?] {
        var result: [String: String?] = [:]
        for key in ProcessInfo.processInfo.environment.keys where key.hasPrefix("PULSE_") { result[key] = .some(nil) }
        for (key, value) in environment { result[key] = value }
        return result
    }

    /// Starts `arguments` (paplay, parec) against this server, output to `stdout`.
    func start(_ arguments: [String], stdout: String) throws -> ChildProcess {
        try ChildProcess(
            arguments[0], arguments, environment: try Harness.environment(processEnvironment),
            stdout: stdout, stderr: stdout + ".err")
    }

    /// Another application playing a steady tone until stopped: sox's endless synth into pacat. A
    /// fixed-length file ran out when the full run's load stretched a test past it.
    func startTone(client: String, frequency: Double, output: String) throws -> ChildProcess {
        let sox = "sox -R -D -V1 -n -r 48000 -c 2 -b 16 -e signed -t raw - synth sine \(frequency) gain -6"
        // 200 ms of buffer: a loaded machine does not starve it (the server applies a volume as it
        // mixes, after the buffer, so the duck's timing is the same).
        let pacat =
            "pacat --playback --raw --format=s16le --rate=48000 --channels=2 --latency-msec=200 --client-name=\(client)"
        // `timeout`: a player left behind by a killed test run ends by itself.
        return try start(["timeout", "300", "sh", "-c", sox + " | " + pacat], stdout: output)
    }

    /// `pactl list sink-inputs`: each stream's application name, process id and per-channel volume.
    /// (Its text, not `-f json`: pipewire-pulse's JSON has values JSONSerialization refuses.)
    func streams() async throws -> [(index: Int, application: String, pid: Int?, volume: [Int])] {
        let out = directory + "/pactl.txt"
        unlink(out)  // ChildProcess appends
        let child = try start(["pactl", "list", "sink-inputs"], stdout: out)
        guard await child.status(within: 10) == 0, let text = try? String(contentsOfFile: out, encoding: .utf8) else {
            throw HarnessError(
                "pactl list sink-inputs failed: \((try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "")")
        }
        var result: [(index: Int, application: String, pid: Int?, volume: [Int])] = []
        for block in text.components(separatedBy: "Sink Input #").dropFirst() {
            let index = Int(block.prefix { $0.isNumber }) ?? -1
            var application = ""
            var pid: Int?
            var volume: [Int] = []
            for line in block.split(separator: "\n") {
                let line = line.trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("Volume:") {
                    // "Volume: front-left: 65536 /  100% / 0.00 dB,   front-right: 65536 / ..."
                    volume = line.matches(of: /: (\d+) \//).compactMap { Int($0.1) }
                } else if let match = line.wholeMatch(of: /application\.name = "(.*)"/) {
                    application = String(match.1)
                } else if let match = line.wholeMatch(of: /application\.process\.id = "(\d+)"/) {
                    pid = Int(match.1)
                }
            }
            result.append((index, application, pid, volume))
        }
        return result
    }

    /// `pactl ARGUMENTS`, expected to succeed.
    func pactl(_ arguments: [String]) async throws {
        let out = directory + "/pactl-command.txt"
        unlink(out)
        let child = try start(["pactl"] + arguments, stdout: out)
        guard await child.status(within: 10) == 0 else {
            throw HarnessError(
                "pactl \(arguments.joined(separator: " ")) failed: \((try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "")"
            )
        }
    }

    /// The volume of stream `pid` as pactl reports it, or nil when it has no stream.
    func volume(ofProcess pid: pid_t) async throws -> [Int]? {
        try await streams().first { $0.pid == Int(pid) }?.volume
    }

    /// Polls pactl until `accept` takes stream `pid`'s volume (each look takes a pactl run, ~10 ms);
    /// the seconds it took, or nil at the deadline.
    func waitForVolume(ofProcess pid: pid_t, timeout: Double, _ accept: ([Int]) -> Bool) async throws -> Double? {
        let start = monotonicNow()
        while monotonicNow() - start < timeout {
            if let volume = try await volume(ofProcess: pid), accept(volume) { return monotonicNow() - start }
            try await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }
}

/// Brings a server up around a whole suite and down after it, also when a test fails. A server that
/// cannot start fails the suite with the reason: never a silent pass.
struct OtherAudioServerTrait: SuiteTrait, TestScoping {
    var kind: OtherAudioServer.Kind
    var name: String
    var isRecursive: Bool { false }

    @TaskLocal static var current: OtherAudioServer?

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void)
        async throws
    {
        try await withServer(up: { [kind, name] in try OtherAudioServer.up(kind, name: name) }, down: { $0.down() }) {
            server in
            try await Self.$current.withValue(server) { try await function() }
        }
    }
}
