import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play -`: audio on stdin is stored in the runtime directory's media/ before the
/// daemon acknowledges it, plays exactly as the same file given by path, and its file is gone
/// once the item has its outcome (or, after a crash, once a daemon starts).
@Suite("play - (audio on stdin)")
struct StdinTests {
    static let formats = ["wav16-stereo.wav", "cbr128.mp3", "flac16.flac", "clip.caf", "vorbis.ogg"]

    @Test("stdin plays bit for bit as the file played by path (sox reads both captures the same)", arguments: formats)
    func stdinPlaysAsTheFile(_ file: String) async throws {
        try await withDaemonRuntime { runtime in
            let path = try Harness.fixture(file)
            let byPath = try await runtime.playCapture([path], label: "path-" + file)
            let byStdin = try await runtime.playCapture(["-"], label: "stdin-" + file, stdin: path)
            try expectSameCapture(byStdin, as: byPath, file)
            #expect(byStdin.debugLines.map(\.path) == ["stdin"], "debug lines name stdin: \(byStdin.outcome)")
            #expect(byStdin.debugLines.map(\.frames) == byPath.debugLines.map(\.frames))
            #expect(runtime.mediaEntries().isEmpty, "media left after the outcome: \(runtime.mediaEntries())")
        }
    }

    /// libsndfile reads no FLAC from a pipe and 0 frames of CAF: stdin is stored first.
    @Test(
        "FLAC and CAF on a real pipe (cat FILE | announce play -) play as the file",
        arguments: ["flac16.flac", "clip.caf"])
    func pipe(_ file: String) async throws {
        try await withDaemonRuntime { runtime in
            let path = try Harness.fixture(file)
            let byPath = try await runtime.playCapture([path], label: "pipe-path-" + file)
            let capture = try Harness.capturePath("pipe-" + file)
            let outcome = try await Runner.run(
                "/bin/sh",
                [
                    "-c", #"cat "$1" | exec "$2" play - -d "$3""#, "sh",
                    path, try Harness.binary(), Harness.fileDevice(capture)
                ],
                environment: runtime.environment)
            try #require(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
            try expectSameCapture(
                Playback(
                    outcome: outcome, capturePath: capture, debugLines: [], otherStderrLines: [],
                    capture: try WAVCapture(path: capture)), as: byPath, file)
            #expect(runtime.mediaEntries().isEmpty)
        }
    }

    @Test("- among files plays in its place; --json names it stdin; options apply as to the file")
    func mixedAndOptions() async throws {
        try await withDaemonRuntime { runtime in
            let first = try Tones.clip(440)
            let middle = try Tones.clip(880)
            let last = try Tones.clip(660)
            let mixed = try await runtime.playCapture([first, "-", last, "--json"], label: "mixed", stdin: middle)
            try #require(mixed.outcome.status == 0, "\(mixed.outcome)")
            #expect(try Tones.heardOrder(capture: mixed.capturePath, candidates: [440, 880, 660]) == [440, 880, 660])
            let paths = mixed.outcome.stdout.split(separator: "\n").compactMap { WireEvent(line: $0)?.path }
            #expect(paths == [first, "stdin", last], "\(mixed.outcome.stdout)")

            // The stored file seeks: --start and --loops, and --rate and --priority apply too.
            let options = ["--start", "0.2s", "--loops", "2", "--rate", "1.5", "--priority", "high", "--pan", "0.5"]
            let path = try Harness.fixture("flac16.flac")
            let byPath = try await runtime.playCapture([path] + options, label: "options-path")
            let byStdin = try await runtime.playCapture(["-"] + options, label: "options-stdin", stdin: path)
            try expectSameCapture(byStdin, as: byPath, "flac16.flac with \(options)")
            #expect(runtime.mediaEntries().isEmpty)
        }
    }

    @Test("bad stdin: one line naming stdin, the documented status, nothing stored or queued")
    func badInput() async throws {
        try await withDaemonRuntime { runtime in
            let text = try Harness.workResult.get().path + "/stdin-text.txt"
            try "just some words\n".write(toFile: text, atomically: true, encoding: .utf8)
            let wav = try Harness.fixture("wav16-stereo.wav")
            let cases:
                [(
                    what: String, arguments: [String], stdin: String, environment: [String: String?], status: Int32,
                    line: String
                )] = [
                    ("empty", ["-"], "/dev/null", [:], 65, "announce: stdin: empty"),
                    ("text", ["-"], text, [:], 65, "announce: stdin: unknown format (text, not audio)"),
                    (
                        "over the limit", ["-"], wav, ["ANNOUNCE_TEST_MEDIA_LIMIT": "10000"], 65,
                        "announce: stdin: more than 10000 bytes, the most announce takes from stdin; play a file instead"
                    ),
                    (
                        "a missing file after -", ["-", "/nonexistent/x.wav"], wav, [:], 66,
                        "announce: /nonexistent/x.wav: no such file"
                    ),
                    ("--start past its end", ["-", "--start", "1h"], wav, [:], 64, "announce: stdin: --start ")
                ]
            for bad in cases {
                let outcome = try await runtime.announce(
                    ["play"] + bad.arguments + ["-d", "null"], environment: bad.environment,
                    stdin: bad.stdin)
                #expect(outcome.status == bad.status, "\(bad.what): \(outcome)")
                #expect(
                    outcome.stderrLines.count == 1 && outcome.stderrLines.first?.contains(bad.line) == true,
                    "\(bad.what): \(outcome)")
                #expect(outcome.stdout.isEmpty)
                #expect(runtime.mediaEntries().isEmpty, "\(bad.what) left \(runtime.mediaEntries())")
            }
            let twice = try await runtime.announce(["play", "-", "-"], stdin: wav)
            #expect(twice.status == 64 && twice.stderr.contains("- (stdin) is given more than once"), "\(twice)")
            // Nothing was queued by any of them: no daemon was even asked.
            #expect(!FileManager.default.fileExists(atPath: runtime.socketPath))
        }
    }

    /// A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) fails the write as a full disk does.
    @Test("a write failure while storing stdin exits 69 with one line and leaves nothing behind")
    func storeFails() async throws {
        try await withDaemonRuntime { runtime in
            let wav = try Harness.fixture("wav16-stereo.wav")
            let outcome = try await Runner.run(
                "/bin/sh",
                [
                    "-c", #"trap "" XFSZ; ulimit -f 16; exec "$1" play - -d null < "$2""#, "sh",
                    try Harness.binary(), wav
                ], environment: runtime.environment)
            #expect(outcome.status == 69, "\(outcome)")
            #expect(
                outcome.stderrLines.count == 1
                    && outcome.stderr.contains(
                        "announce: stdin: cannot store it in \(runtime.mediaPath): File too large"),
                "\(outcome)")
            #expect(runtime.mediaEntries().isEmpty, "left \(runtime.mediaEntries())")
        }
    }

    @Test("kill -9 after the ack: the stdin item plays after the restart and its media file goes with the outcome")
    func survivesDaemonKill() async throws {
        try await withDaemonRuntime { runtime in
            let tone = try Tones.clip(523, seconds: 0.5)
            let daemon = try await runtime.startDaemon(
                device: Harness.fileDevice(try Harness.capturePath("kill-first")))
            try await runtime.control("pause")
            let queued = try await runtime.announce(["play", "-", "--no-wait"], stdin: tone)
            let id = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(queued.status == 0 && id.isItemID, "\(queued)")
            #expect(
                runtime.mediaEntries().count == 1 && runtime.mediaEntries().first?.hasPrefix(".") == false,
                "\(runtime.mediaEntries())")
            daemon.signal(SIGKILL)
            #expect(await daemon.waitForExit(timeout: 10))

            let capture = try Harness.capturePath("kill-restarted")
            let restarted = try await runtime.startDaemon(device: Harness.fileDevice(capture))
            #expect(runtime.mediaEntries().count == 1, "the restart keeps the queued item's media")
            let events = try await runtime.subscribe()
            try await runtime.control("resume")
            let seen = try await offPool { try events.events(until: { $0.event == "finished" && $0.id == id }) }
            let finished = try #require(seen.last)
            #expect(finished.outcome?.kind == "played" && finished.path == "stdin", "\(seen)")
            #expect(seen.first { $0.event == "started" }?.path == "stdin")
            #expect(try Tones.heardOrder(capture: capture, candidates: [523]) == [523])
            #expect(runtime.mediaEntries().isEmpty, "media left after the outcome: \(runtime.mediaEntries())")
            _ = restarted
        }
    }

    /// The sweep at start deletes what a killed client left, and keeps what a live one writes
    /// (it holds a lock on it), which then plays.
    @Test("a client killed mid-stdin leaves nothing after the daemon's next start; a live one is left alone")
    func killedClient() async throws {
        try await withDaemonRuntime { runtime in
            let wav = try Data(contentsOf: URL(fileURLWithPath: try Harness.fixture("wav16-stereo.wav")))
            let killed = try StdinFeeder(runtime: runtime, capture: try Harness.capturePath("killed-client"))
            let live = try StdinFeeder(runtime: runtime, capture: try Harness.capturePath("live-client"))
            killed.write(wav.prefix(8192))
            live.write(wav.prefix(8192))
            try await runtime.until("both clients have a temporary file") { runtime.mediaEntries().count == 2 }
            killed.client.signal(SIGKILL)
            #expect(await killed.client.exited(within: 10))
            killed.close()

            let daemon = try await runtime.startDaemon(device: nil)
            #expect(
                runtime.mediaEntries().count == 1,
                "the killed client's file goes, the live one's stays: \(runtime.mediaEntries())")
            #expect(daemon.log.contains("removed 1 media file(s) of no queued item"), "\(daemon.log)")
            live.write(wav.dropFirst(8192))
            live.close()
            #expect(await live.client.exited(within: 30))
            #expect(live.client.exitStatus == 0, "\(live.client.endDescription): \(live.stderr)")
            #expect(runtime.mediaEntries().isEmpty, "media left after the outcome: \(runtime.mediaEntries())")
        }
    }
}

/// `announce play - -d file:CAPTURE` reading a FIFO the test writes at its own pace.
private final class StdinFeeder: @unchecked Sendable {
    let client: ChildProcess
    let stderrPath: String
    private var writer: Int32

    init(runtime: DaemonRuntime, capture: String) throws {
        let fifo = capture + ".fifo"
        guard mkfifo(fifo, 0o600) == 0 else {
            throw HarnessError("mkfifo \(fifo): \(String(cString: strerror(errno)))")
        }
        // Read-write: the open does not wait for the client, and the client's open finds a writer.
        writer = open(fifo, O_RDWR | O_CLOEXEC)
        guard writer >= 0 else { throw HarnessError("open \(fifo): \(String(cString: strerror(errno)))") }
        stderrPath = capture + ".stderr"
        client = try ChildProcess(
            "announce play -", [try Harness.binary(), "play", "-", "-d", Harness.fileDevice(capture)],
            environment: try runtime.resolvedEnvironment(), stdout: stderrPath, stderr: stderrPath, stdin: fifo)
    }

    deinit { close() }

    func write(_ bytes: Data) {
        _ = bytes.withUnsafeBytes { Glibc.write(writer, $0.baseAddress, $0.count) }
    }

    /// End of stdin.
    func close() {
        if writer >= 0 { Glibc.close(writer) }
        writer = -1
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}

extension DaemonRuntime {
    /// Waits until `condition` holds, checking every 5 ms; throws after `timeout` seconds.
    func until(_ what: String, timeout: Double = 10, _ condition: () -> Bool) async throws {
        let deadline = monotonicNow() + timeout
        while !condition() {
            guard monotonicNow() < deadline else { throw HarnessError("waited \(timeout) s for: \(what)") }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
    }
}
