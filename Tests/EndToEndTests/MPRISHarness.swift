import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private D-Bus session bus (`dbus-daemon --session`), its life bounded by `timeout`, and the
/// real MPRIS programs the tests drive on it: mpv with mpv-mpris, and playerctl.
final class PrivateSessionBus: @unchecked Sendable {
    let address: String
    let directory: String
    private let daemon: ChildProcess
    private var children: [ChildProcess] = []
    private let lock = NSLock()

    /// Throws, saying what to install, when dbus-daemon, mpv, mpv-mpris or playerctl is missing.
    init(_ label: String, lifetime: Int = 120) throws {
        for (program, package) in [("dbus-daemon", "dbus-daemon"), ("mpv", "mpv"), ("playerctl", "playerctl")]
        where !Self.onPath(program) {
            throw HarnessError(
                "\(program) is not installed: the MPRIS tests need Debian's \(package) (`make test` installs it)")
        }
        guard FileManager.default.fileExists(atPath: Self.mprisScript) else {
            throw HarnessError(
                "\(Self.mprisScript) is missing: the MPRIS tests need Debian's mpv-mpris (`make test` installs it)")
        }
        directory = try Harness.workResult.get().appendingPathComponent("mpris-\(label)").path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        (daemon, address) = try startTelling(
            "dbus-daemon",
            [
                "timeout", "\(lifetime)", "dbus-daemon", "--session", "--nofork",
                "--print-address=1"
            ],
            environment: ProcessInfo.processInfo.environment)
    }

    /// mpv-mpris as Debian installs it (mpv loads it by path: `--no-config` leaves /etc/mpv out).
    static let mprisScript = "/usr/lib/mpv-mpris/mpris.so"

    private static func onPath(_ program: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { access("\($0)/\(program)", X_OK) == 0 }
    }

    /// This process's environment on this bus, with none of a desktop's.
    var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { $1 }
    }

    /// mpv playing `file` in a loop to no device (`--ao=null`), on this bus as an MPRIS player.
    func startMPV(_ file: String, label: String) throws -> ChildProcess {
        try start(
            label,
            [
                "timeout", "120", "mpv", "--no-config", "--script=\(Self.mprisScript)", "--ao=null", "--no-video",
                "--loop-file=inf", "--really-quiet", file
            ])
    }

    /// `playerctl -p PLAYER --follow COMMAND` (`status`, `metadata KEY`): each value it sees, one a line.
    func follow(_ player: String, _ command: String...) throws -> StatusFollower {
        let path = "\(directory)/follow-\(player)-\(UUID().uuidString).txt"
        let process = try start(
            "follow-\(player)",
            ["timeout", "120", "playerctl", "-p", player, "--follow"]
                + (command.isEmpty ? ["status"] : command), stdout: path)
        return StatusFollower(player: player, path: path, process: process)
    }

    /// `playerctl ARGUMENTS` on this bus, waited for.
    func playerctl(_ arguments: String...) async throws -> Outcome {
        try await Runner.run("playerctl", arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": address])
    }

    private func start(_ name: String, _ arguments: [String], stdout: String? = nil) throws -> ChildProcess {
        let log = "\(directory)/\(name).log"
        let process = try ChildProcess(name, arguments, environment: environment, stdout: stdout ?? log, stderr: log)
        lock.withLock { children.append(process) }
        return process
    }

    /// Ends the programs started here, then the bus (only these pids).
    func stop() {
        for child in lock.withLock({ children }).reversed() { child.stop(grace: 1) }
        daemon.stop(grace: 1)
    }
}

/// The lines of a `playerctl --follow`, read from its file as they come.
struct StatusFollower: Sendable {
    let player: String
    let path: String
    let process: ChildProcess

    var statuses: [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// From the first Playing on (mpv says Stopped while it loads its file).
    var sincePlaying: [String] { Array(statuses.drop { $0 != "Playing" }) }

    /// Returns once the statuses seen end with `status` after at least `count` lines; throws
    /// after `timeout` s (a full test run can load the machine heavily). The follower writes to
    /// a file, read every 5 ms.
    @discardableResult
    func waitFor(_ status: String, after count: Int = 0, timeout: Double = 20) async throws -> [String] {
        let deadline = monotonicNow() + timeout
        while true {
            let seen = statuses
            if seen.count > count, seen.last == status { return seen }
            guard monotonicNow() < deadline else {
                throw HarnessError("\(player) was not \(status) within \(timeout) s: \(seen)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
