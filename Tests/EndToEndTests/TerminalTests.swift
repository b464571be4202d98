import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real terminal: a private tmux server (its own socket) with one window running bash, read
/// back as the user sees it (`capture-pane`).
final class Terminal: @unchecked Sendable {
    private let socket: String

    /// A `columns` × 10 window whose shell has exactly `environment`.
    init(columns: Int, environment: [String: String]) throws {
        socket = "announce-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        let variables = environment.map { "\($0.key)=\($0.value)" }
        try run(
            [
                "-f", "/dev/null", "new-session", "-d", "-x", "\(columns)", "-y", "10",
                "env", "-i"
            ] + variables + ["PS1=$ ", "bash", "--norc", "--noprofile"])
    }

    /// `tmux -L SOCKET ARGUMENTS`; its stdout.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let output = try Harness.workResult.get().appendingPathComponent("captures/tmux-\(UUID().uuidString)").path
        defer { unlink(output) }
        let tmux = try ChildProcess(
            "tmux", ["/usr/bin/tmux", "-L", socket] + arguments, environment: ["PATH": "/usr/bin:/bin"],
            stdout: output, stderr: output)
        let status = tmux.waitForExit(timeout: 10)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw HarnessError(
                "tmux \(arguments.joined(separator: " ")) (is tmux installed? make test installs it): \(status.map { "exit \($0)" } ?? "hung"): \(text)"
            )
        }
        return text
    }

    /// Types `line` and Enter.
    func type(_ line: String) throws {
        try run(["send-keys", "-t", "0", "-l", line])
        try run(["send-keys", "-t", "0", "Enter"])
    }

    func press(_ key: String) throws { try run(["send-keys", "-t", "0", key]) }

    /// The window's rows as shown, trailing spaces cut.
    func screen() throws -> [String] {
        try run(["capture-pane", "-p", "-t", "0"]).split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0.reversed().drop { $0 == " " }.reversed()) }
    }

    /// The screen once a row satisfies `predicate`; throws with the screen after `timeout` s.
    func waitFor(_ what: String, timeout: Double = 10, _ predicate: (String) -> Bool) async throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let rows = try screen()
            if rows.contains(where: predicate) { return rows }
            guard Date() < deadline else {
                throw HarnessError("no \(what) on the terminal within \(timeout) s:\n\(rows.joined(separator: "\n"))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func close() { try? run(["kill-server"]) }
}

@Suite("The progress line on a real terminal", .serialized, .timeLimit(.minutes(2)))
struct TerminalTests {
    /// A 1 s tone in the scratch directory, under `name`.
    static func tone(_ name: String) throws -> String {
        let path = try Harness.workResult.get().appendingPathComponent(name).path
        if !FileManager.default.fileExists(atPath: path) { try Sox.tone(path, frequency: 440, seconds: 1, channels: 2) }
        return path
    }

    static func withTerminal(
        columns: Int = 80, environment extra: [String: String?] = [:],
        _ body: @Sendable (Terminal, DaemonRuntime, String) async throws -> Void
    ) async throws {
        let runtime = try DaemonRuntime(environment: extra)
        // A colour terminal: NO_COLOR (set in some CI environments) would make the line plain.
        var environment = try runtime.resolvedEnvironment()
        environment["NO_COLOR"] = nil
        environment["TERM"] = "xterm-256color"
        // Times on the line read the same whenever the test runs: an hour ahead is never tomorrow.
        environment["TZ"] = zone(whereNowIs: 12, 0)
        let terminal = try Terminal(columns: columns, environment: environment)
        do {
            try await body(terminal, runtime, try Harness.binary())
        } catch {
            terminal.close()
            await runtime.cleanup()
            throw error
        }
        terminal.close()
        await runtime.cleanup()
    }

    /// A POSIX TZ in which the local time now is about `hour`:`minute`.
    static func zone(whereNowIs hour: Int, _ minute: Int) -> String {
        let minutesToday = Int(Date().timeIntervalSince1970) / 60 % 1440
        var west = (minutesToday - (hour * 60 + minute) + 1440) % 1440  // local = UTC - west
        if west > 720 { west -= 1440 }
        return "ANN\(west < 0 ? "-" : "+")\(abs(west) / 60):\(String(format: "%02d", abs(west) % 60))"
    }

    @Test("a play into a paused queue says so where the progress goes; the line ends with a newline when it has played")
    func pausedThenPlayed() async throws {
        let clip = try Self.tone("tone-1s.wav")
        try await Self.withTerminal { terminal, runtime, announce in
            try await runtime.control("pause")  // no daemon runs: the pause waits for one
            try terminal.type("\(announce) play -d null \(clip); echo EXIT=$?")
            _ = try await terminal.waitFor("the paused line") {
                $0 == "… tone-1s.wav  paused: waits for announce resume"
            }
            try await runtime.control("resume")
            let rows = try await terminal.waitFor("the exit") { $0.hasPrefix("EXIT=") }
            let exit = rows.firstIndex { $0.hasPrefix("EXIT=") } ?? 1
            #expect(rows[exit] == "EXIT=0")
            #expect(
                rows[exit - 1] == "▶ tone-1s.wav  0:01.0 / 0:01.0",
                "the finished line stays, ended by a newline: \(rows)")
        }
    }

    @Test("a live stream's title follows its name on the line and changes with the stream's")
    func streamTitle() async throws {
        let clip = try Harness.capturePath("sweep") + ".mp3"
        try await makeStreamClip(clip, from: 200, to: 2000, seconds: 3)
        let server = try IcyTestServer(
            serving: clip,
            options: [
                "--rate", "16000", "--metaint", "4000",
                "--titles", "First song|Second song", "--title-every", "12000"
            ])
        defer { server.stop() }
        try await Self.withTerminal(environment: URLTests.direct) { terminal, _, announce in
            // Titles turn every 0.75 s for 6 s: a loaded machine's screen reads still see each.
            try terminal.type("\(announce) play --stream \(server.url()) --duration 6s -d null; echo EXIT=$?")
            _ = try await terminal.waitFor("the first title") { $0.hasPrefix("▶ radio: First song  ") }
            _ = try await terminal.waitFor("the second title") { $0.hasPrefix("▶ radio: Second song  ") }
            let rows = try await terminal.waitFor("the exit") { $0.hasPrefix("EXIT=") }
            let exit = rows.firstIndex { $0.hasPrefix("EXIT=") } ?? 1
            #expect(rows[exit] == "EXIT=0")
            #expect(rows[exit - 1].wholeMatch(of: /▶ radio: (First|Second) song  0:06\.0 \/ 0:06\.0/) != nil, "\(rows)")
        }
    }

    @Test("announce pause mid-play: the line says paused by you with where it stopped, and keeps saying it")
    func pausedByYou() async throws {
        let clip = try Self.tone("tone-1s.wav")
        try await Self.withTerminal { terminal, runtime, announce in
            // Looped for ever on null: still playing whenever the pause comes.
            try terminal.type("clear; \(announce) play -d null --loops -1 \(clip); echo EXIT=$?")
            _ = try await terminal.waitFor("the playing line") { $0.hasPrefix("▶ tone-1s.wav  ") }
            try await runtime.control("pause")
            let isStopped: @Sendable (String) -> Bool = {
                $0.wholeMatch(of: /⏸ tone-1s\.wav  (\d+:)?\d+:\d\d\.\d  paused by you/) != nil
            }
            _ = try await terminal.waitFor("the paused line", isStopped)
            // The daemon's `waiting` (paused) event follows at once (only a waiting client gets it,
            // so it cannot be watched for): the line must not turn into a waiting line meanwhile.
            for _ in 0..<25 {
                let screen = try terminal.screen()
                let shown = screen.contains(where: isStopped)
                #expect(shown, "\(screen)")
                try await Task.sleep(for: .milliseconds(20))
            }
            try terminal.press("C-c")
            _ = try await terminal.waitFor("the exit") { $0 == "EXIT=130" }
        }
    }

    @Test(
        "a cancelled item is said once: the line ends with cancelled, no reason line repeats it",
        arguments: [
            (["cancel", "--tag", "t"], "cancelled"), (["clear"], "cancelled (cleared)")
        ])
    func cancelledOnce(_ command: [String], _ outcome: String) async throws {
        let clip = try Self.tone("tone-1s.wav")
        try await Self.withTerminal { terminal, runtime, announce in
            try terminal.type("clear; \(announce) play -d null --tag t --delay 1h \(clip); echo EXIT=$?")
            _ = try await terminal.waitFor("the scheduled line") { $0.hasPrefix("… tone-1s.wav  scheduled") }
            let control = try await runtime.announce(command)
            #expect(control.status == 0, "\(control)")
            let rows = try await terminal.waitFor("the exit") { $0.hasPrefix("EXIT=") }
            let exit = rows.firstIndex { $0.hasPrefix("EXIT=") } ?? 1
            #expect(Array(rows[(exit - 1)...exit]) == ["⏸ tone-1s.wav  \(outcome)", "EXIT=75"], "\(rows)")
        }
    }

    @Test("several files: a line each, the second waiting for the first until it plays")
    func twoFiles() async throws {
        let first = try Self.tone("tone-1s.wav")
        let second = try Self.tone("second-1s.wav")
        try await Self.withTerminal { terminal, runtime, announce in
            try await runtime.control("pause")
            try terminal.type("clear; \(announce) play -d null \(first) \(second); echo EXIT=$?")
            _ = try await terminal.waitFor("the paused line") { $0.hasPrefix("… tone-1s.wav  paused") }
            try await runtime.control("resume")
            let rows = try await terminal.waitFor("the exit") { $0.hasPrefix("EXIT=") }
            let exit = rows.firstIndex { $0.hasPrefix("EXIT=") } ?? 2
            #expect(
                Array(rows[(exit - 2)...exit]) == [
                    "▶ tone-1s.wav  0:01.0 / 0:01.0", "▶ second-1s.wav  0:01.0 / 0:01.0", "EXIT=0"
                ], "\(rows)")
        }
    }

    @Test(
        "a scheduled item says when it plays and how long that is from now; on another day, the date too",
        arguments: [(12, 0, "13:0"), (23, 30, "\\d{4}-\\d\\d-\\d\\d 00:3")])
    func scheduled(hour: Int, minute: Int, when: String) async throws {
        let clip = try Self.tone("tone-1s.wav")
        try await Self.withTerminal { terminal, _, announce in
            let zone = Self.zone(whereNowIs: hour, minute)
            try terminal.type("TZ=\(zone) \(announce) play -d null --delay 1h \(clip); echo EXIT=$?")
            let rows = try await terminal.waitFor("the scheduled line") { $0.hasPrefix("… tone-1s.wav") }
            let line = rows.first { $0.hasPrefix("… tone-1s.wav") } ?? ""
            let expected = try Regex("… tone-1s\\.wav  scheduled \(when)\\d \\(in (59m|1h00m)\\)")
            #expect(line.wholeMatch(of: expected) != nil, "\(zone): \(line)")
            try terminal.press("C-c")
            _ = try await terminal.waitFor("the exit") { $0 == "EXIT=130" }
        }
    }

    @Test(
        "the line is cut to the terminal's width (no wrapped rows) by shortening the name, and Ctrl-C leaves it ended by a newline"
    )
    func widthAndInterrupt() async throws {
        let clip = try Self.tone("a-file-name-long-enough-to-be-wider-than-the-terminal.wav")
        try await Self.withTerminal(columns: 40) { terminal, _, announce in
            try terminal.type("clear; \(announce) play -d null --delay 1h \(clip); echo EXIT=$?")
            let rows = try await terminal.waitFor("the scheduled line") { $0.hasPrefix("… a-file-n") }
            let line = rows.firstIndex { $0.hasPrefix("… a-file-n") } ?? 0
            #expect(rows[line].count == 39, "cut one column short of the 40-column edge: \(rows[line])")
            // The name gives way, the state stays whole.
            #expect(
                rows[line].wholeMatch(of: /… a-file-n[a-z-]*…  scheduled \d\d:\d\d \(in (59m|1h00m)\)/) != nil,
                "\(rows[line])")
            #expect(rows[line + 1].isEmpty, "nothing wrapped onto the next row: \(rows)")
            try terminal.press("C-c")
            let after = try await terminal.waitFor("the exit") { $0.hasPrefix("EXIT=") }
            let exit = after.firstIndex { $0.hasPrefix("EXIT=") } ?? 1
            #expect(after[exit] == "EXIT=130")
            // The terminal echoes ^C after the line (wrapping its C at the edge); then our newline.
            #expect(
                after[..<exit].contains { $0.hasPrefix("… a-file-n") },
                "the line stays and the exit is on a row of its own: \(after)")
        }
    }

    @Test("in the background (not the terminal's foreground process group) nothing is drawn")
    func background() async throws {
        let clip = try Self.tone("tone-1s.wav")
        try await Self.withTerminal { terminal, runtime, announce in
            try await runtime.control("pause")
            try terminal.type("\(announce) play -d null \(clip) & sleep 1; echo SLEPT")
            let rows = try await terminal.waitFor("the shell") { $0 == "SLEPT" }
            #expect(!rows.contains { $0.contains("tone-1s.wav  ") }, "no line from a background job: \(rows)")
            try await runtime.control("resume")
            try terminal.type("wait $!; echo EXIT=$?")
            _ = try await terminal.waitFor("the exit") { $0 == "EXIT=0" }
        }
    }

    /// `script` gives the command a terminal and records every byte written to it.
    static func rawTerminalOutput(_ runtime: DaemonRuntime, _ command: String, environment: [String: String?])
        async throws -> [UInt8]
    {
        let record = try Harness.workResult.get().appendingPathComponent("captures/script-\(UUID().uuidString)").path
        let outcome = try await Runner.run(
            "/usr/bin/script", ["-q", "-e", "-c", command, record],
            environment: runtime.environment.merging(environment) { $1 })
        #expect(outcome.status == 0, "\(command): \(outcome)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: record)))
    }

    @Test(
        "TERM=dumb and NO_COLOR get plain ASCII without escape sequences",
        arguments: [["TERM": "dumb"], ["TERM": "xterm", "NO_COLOR": "1"]])
    func plain(_ environment: [String: String]) async throws {
        let clip = try Self.tone("tone-1s.wav")
        let runtime = try DaemonRuntime()
        defer { Task { await runtime.cleanup() } }
        let command = "\(try Harness.binary()) play -d null \(clip)"
        let plain = try await Self.rawTerminalOutput(runtime, command, environment: environment)
        #expect(
            !plain.contains(0x1B) && plain.allSatisfy { $0 < 0x80 },
            "\(String(decoding: plain, as: UTF8.self).debugDescription)")
        #expect(String(decoding: plain, as: UTF8.self).contains("> tone-1s.wav  0:01.0 / 0:01.0"))
        // The same terminal without them gets the erase-line escape and the glyph: the check above can fail.
        let fancy = try await Self.rawTerminalOutput(runtime, command, environment: ["TERM": "xterm", "NO_COLOR": nil])
        #expect(String(decoding: fancy, as: UTF8.self).contains("\u{1B}[K▶ tone-1s.wav"))
    }

    @Test("without a terminal (a pipe, cron) play writes nothing at all")
    func noTerminal() async throws {
        let clip = try Self.tone("tone-1s.wav")
        let runtime = try DaemonRuntime()
        let result = try await runtime.announce(["play", "-d", "null", clip])
        await runtime.cleanup()
        #expect(result.status == 0 && result.stderr.isEmpty && result.stdout.isEmpty, "\(result)")
    }
}
