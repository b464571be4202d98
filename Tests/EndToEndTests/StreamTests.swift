import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play --stream URL` (DESIGN §4, Live streams): the daemon reads a live radio of
/// Tests/Servers/icy.py on the file device: ICY metadata taken out (the capture is the MP3's
/// own decode by ffmpeg), titles in status and events, drops and server restarts survived,
/// a server gone for good failing after the reconnect limit, Ogg Vorbis chains, and what a
/// daemon restart does. The preemption test is on the paced device (StreamPacedTests).
@Suite("play --stream (live radio)")
struct StreamTests {
    static let direct = URLTests.direct
    /// The MP3s made here are 128 kbit/s: a server paced at this many bytes a second is live.
    static let realTime = "16000"

    /// A 3 s sweep as MP3: no stretch of it sounds like another, so a misplaced byte shows.
    static func sweep() async throws -> String {
        let path = try Harness.capturePath("sweep") + ".mp3"
        try await makeStreamClip(path, from: 200, to: 2000, seconds: 3)
        return path
    }

    /// sox's reading of a capture (a tool we did not write), interleaved stereo.
    static func soxSamples(_ path: String) async throws -> [Double] {
        let raw = path + ".sox.f32"
        let sox = try await Runner.run("sox", ["-V1", path, "-t", "raw", "-e", "floating-point", "-b", "32", raw])
        guard sox.status == 0 else { throw HarnessError("sox \(path): \(sox)") }
        return try PCM.reference(raw, channels: 2).samples
    }

    /// The largest difference between two sample runs over `count` samples.
    static func largestDifference(_ a: [Double], _ b: [Double], count: Int) -> Double {
        zip(a.prefix(count), b.prefix(count)).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    @Test(
        "ICY metadata never reaches the audio: 2 s of a stream with a block every 997 bytes are the MP3's own first 2 s (ffmpeg), exactly --duration long"
    )
    func metadataIsTakenOut() async throws {
        let clip = try await Self.sweep()
        let server = try IcyTestServer(
            serving: clip, options: ["--metaint", "997", "--titles", "One|Two|Three", "--title-every", "5000"])
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("stream-icy")
            let outcome = try await runtime.announce(
                [
                    "play", "--stream", server.url(), "--duration", "2s", "-d", Harness.fileDevice(capture),
                    "--json"
                ], environment: Self.direct)
            #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
            let finished = try #require(outcome.stdout.split(separator: "\n").compactMap { WireEvent(line: $0) }.first)
            #expect(finished.outcome?.kind == "played" && finished.warning == nil, "\(finished)")
            let heard = try await Self.soxSamples(capture)
            let source = try await ffmpegSamples(clip)
            #expect(heard.count == 2 * 44100 * 2, "\(heard.count / 2) frames, not 2 s")
            // A metadata block played as MP3 data breaks frames: dropouts and clicks far above this.
            let difference = Self.largestDifference(heard, source, count: heard.count)
            #expect(difference < 1e-4, "the capture differs from ffmpeg's decode by up to \(difference)")
            #expect(try await server.connections(atLeast: 1).count == 1)
        }
    }

    @Test(
        "the stream's title shows in status --json and in title events as it changes; --no-wait returns at once; cancel ends it"
    )
    func titles() async throws {
        let clip = try await Self.sweep()
        let titles = ["First song", "Zweites Lied – ünïcödé", "Don't Stop"]
        let server = try IcyTestServer(
            serving: clip,
            options: [
                "--rate", Self.realTime, "--metaint", "4000",
                "--titles", titles.joined(separator: "|"), "--title-every", "12000"
            ])
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: "null", environment: Self.direct)
            let events = try await runtime.subscribe()
            let queued = try await runtime.announce(["play", "--stream", server.url(), "--no-wait", "-d", "null"])
            #expect(queued.status == 0, "\(queued)")
            let id = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let seen = try await offPool {
                try events.events(until: { $0.event == "title" && $0.id == id && $0.title == titles[1] }, timeout: 20)
            }
            #expect(seen.filter { $0.event == "title" }.compactMap(\.title) == Array(titles.prefix(2)), "\(seen)")
            let status = try await runtime.announce(["status", "--json"])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status)")
            let playing = try #require(object["playing"] as? [String: Any], "\(status.stdout)")
            #expect(playing["id"] as? String == id && playing["path"] as? String == server.url())
            #expect(titles.contains(playing["title"] as? String ?? ""), "\(status.stdout)")
            let text = try await runtime.announce(["queue"])
            #expect(titles.contains { text.stdout.contains("\"\($0)\"") }, "\(text)")
            let cancelled = try await runtime.announce(["cancel", id])
            #expect(cancelled.status == 0, "\(cancelled)")
            let end = try await offPool { try events.events(until: { $0.event == "finished" && $0.id == id }) }
            #expect(end.last?.outcome?.kind == "cancelled")
        }
    }

    @Test(
        "a server that restarts mid-stream is connected to again: the item plays on to its --duration and says it reconnected"
    )
    func serverRestarts() async throws {
        let clip = try await Self.sweep()
        let options = ["--rate", Self.realTime, "--live"]
        let first = try IcyTestServer(serving: clip, options: options)
        defer { first.stop() }
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: "null", environment: Self.direct)
            let events = try await runtime.subscribe()
            let capture = try Harness.capturePath("stream-restart")
            let play = Task {
                // Long enough that a loaded machine's reconnection leaves stream audio at the end to
                // hear: tries come 0.5, 1.5, 3.5 and 7.5 s after the drop (ReconnectBackoff), and a
                // loaded run's new icy.py may miss the third.
                try await runtime.announce([
                    "play", "--stream", first.url(), "--duration", "10s", "-d", Harness.fileDevice(capture), "--json"
                ])
            }
            _ = try await offPool { try events.events(until: { $0.event == "started" }) }
            let second = try await offPool {
                first.stop()
                return try IcyTestServer(serving: clip, options: options, port: first.port)
            }
            defer { second.stop() }
            let outcome = try await play.value
            #expect(outcome.status == 0, "\(outcome)")
            let finished = outcome.stdout.split(separator: "\n").compactMap { WireEvent(line: $0) }.first
            #expect(
                finished?.outcome?.kind == "played" && finished?.warning?.contains("reconnected 1 time") == true,
                "\(outcome)")
            #expect(try await second.connections(atLeast: 1).count == 1)
            // The whole --duration, and the stream again at its end.
            let heard = try await Self.soxSamples(capture)
            #expect(heard.count == 10 * 44100 * 2)
            let tail = heard.suffix(44100)
            #expect(
                (tail.reduce(0) { $0 + $1 * $1 } / Double(tail.count)).squareRoot() > 0.1, "no stream after the restart"
            )
        }
    }

    @Test(
        "a server gone for good fails the item with 66 after the config file's reconnect-limit, naming the URL and the last reason"
    )
    func serverGone() async throws {
        let clip = try await Self.sweep()
        let server = try IcyTestServer(serving: clip, options: ["--rate", Self.realTime])
        defer { server.stop() }
        let home = try Harness.workResult.get().path + "/stream-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
        try (Harness.baseConfig + "reconnect-limit = 2s\n").write(
            toFile: home + "/announce/config", atomically: true, encoding: .utf8)
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(
                device: "null", environment: Self.direct.merging(["XDG_CONFIG_HOME": home]) { $1 })
            let events = try await runtime.subscribe()
            let play = Task { try await runtime.announce(["play", "--stream", server.url(), "-d", "null"]) }
            _ = try await offPool { try events.events(until: { $0.event == "started" }) }
            let stopped = monotonicNow()  // the outage begins as the server dies, after this
            try await offPool { server.stop() }
            let outcome = try await play.value
            let elapsed = monotonicNow() - stopped
            #expect(outcome.status == 66, "\(outcome)")
            #expect(
                outcome.stderrLines == [
                    "announce: \(server.url()): the stream dropped and did not come back within 2 s (cannot connect to 127.0.0.1:\(server.port): Connection refused)"
                ],
                "\(outcome)")
            #expect(elapsed >= 2 && elapsed < 15, "gave up \(elapsed) s after the server went")
        }
    }

    @Test(
        "an Ogg Vorbis stream plays: each pass of the file a new chained link, joined without a gap (ffmpeg's decode, repeated), its comments its title"
    )
    func oggVorbis() async throws {
        let clip = try Harness.capturePath("sweep") + ".ogg"
        try await makeStreamClip(
            clip, from: 300, to: 900, seconds: 1.5, comments: ["ARTIST=Test Band", "TITLE=Ogg Song"])
        let server = try IcyTestServer(serving: clip, options: ["--metaint", "0", "--content-type", "application/ogg"])
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: "null", environment: Self.direct)
            let events = try await runtime.subscribe()
            let capture = try Harness.capturePath("stream-ogg")
            let outcome = try await runtime.announce([
                "play", "--stream", server.url("radio.ogg"), "--duration", "4s",
                "-d", Harness.fileDevice(capture)
            ])
            #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
            let heard = try await Self.soxSamples(capture)
            let once = try await ffmpegSamples(clip)
            #expect(heard.count == 4 * 44100 * 2, "\(heard.count / 2) frames, not 4 s")
            let difference = Self.largestDifference(heard, once + once + once, count: heard.count)
            #expect(
                difference < 1e-4,
                "the capture differs from ffmpeg's decode of the file played three times by up to \(difference)")
            let seen = try await offPool { try events.events(until: { $0.event == "finished" }) }
            #expect(seen.filter { $0.event == "title" }.map(\.title) == ["Test Band - Ogg Song"], "\(seen)")
        }
    }

    @Test(
        "a daemon restart ends a live stream as cancelled, saying why, unless --persist, which rejoins it live for what is left of its --duration"
    )
    func daemonRestart() async throws {
        let clip = try await Self.sweep()
        let server = try IcyTestServer(serving: clip, options: ["--rate", Self.realTime, "--live"])
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            // Waiting clients, as a user's: each reconnects (starting a daemon) when the daemon goes.
            // Two daemons start and stop here: on a loaded machine that takes longer than a play.
            let environment = runtime.environment.merging(Self.direct) { $1 }
            let plain = try Runner.launch(
                ["play", "--stream", server.url("plain"), "-d", "null"], environment: environment, killAfter: 90)
            _ = try await server.connections(atLeast: 1)
            // 6 s: the stopping daemon must not hear all of it first (a loaded CI machine took 3 s once).
            let kept = try Runner.launch(
                [
                    "play", "--stream", server.url("kept"), "--persist", "--duration", "6s", "--category", "ambient",
                    "-d", "null", "--json"
                ], environment: environment, killAfter: 90)
            // The restart follows the kept stream's connection at once: a CI run starved the pool
            // for 8 s, and the stopping daemon heard all 6 s first.
            let first = try #require(
                try await server.connections(atLeast: 2) { runtime.signalLockHolder(SIGTERM) },
                "no daemon holds the lock")
            let ended = await plain.outcome()
            #expect(ended.status == 75, "\(ended); daemon.log: \(runtime.daemonLogLines().suffix(40))")
            #expect(
                ended.stderr.contains("a live stream is not resumed after the daemon restarts (--persist resumes it)"),
                "\(ended)")
            let resumed = await kept.outcome()
            #expect(resumed.status == 0, "\(resumed); daemon.log: \(runtime.daemonLogLines().suffix(40))")
            let finished = resumed.stdout.split(separator: "\n").compactMap { WireEvent(line: $0) }.first
            #expect(finished?.outcome?.kind == "played" && finished?.heard == 6, "\(resumed)")
            // The kept stream connected again (live), the plain one did not.
            #expect(try await server.connections(atLeast: 3).count == 3)
            #expect(runtime.lockPID != first)
        }
    }

    @Test(
        "what cannot be a stream: 404 and a refused connection are 66, a page 65, naming the URL; bad options 64 before anything is queued"
    )
    func badStreams() async throws {
        let server = try HTTPTestServer(directory: try Harness.fixtures().path)
        defer { server.stop() }
        let refusing = try RefusingPort()
        let closed = "http://127.0.0.1:\(refusing.port)/radio"
        try await withDaemonRuntime { runtime in
            let cases: [(String, [String], Int32, String)] = [
                (
                    "404", [server.url("missing.mp3")], 66,
                    "announce: \(server.url("missing.mp3")): HTTP 404 File not found"
                ),
                ("a page", [server.url("page")], 65, "announce: \(server.url("page")): not audio (text/html)"),
                (
                    "refused", [closed], 66,
                    "announce: \(closed): cannot connect to 127.0.0.1:\(refusing.port): Connection refused"
                ),
                ("a file", ["/tmp/x.mp3"], 64, "announce: --stream plays http:// and https:// URLs, not /tmp/x.mp3"),
                (
                    "loops", [closed, "--loops", "2"], 64,
                    "announce: a live stream cannot seek: no --loops or --start with --stream"
                ),
                (
                    "rate", [closed, "--rate", "2"], 64,
                    "announce: a live stream comes at its own pace: no --rate or --skip-silence with --stream"
                )
            ]
            for (what, arguments, status, line) in cases {
                let outcome = try await runtime.announce(
                    ["play", "--stream"] + arguments + ["-d", "null"], environment: Self.direct)
                #expect(outcome.status == status, "\(what): \(outcome)")
                #expect(outcome.stderrLines.first?.hasPrefix(line) == true, "\(what): \(outcome)")
            }
            let lone = try await runtime.announce(["play", "--duration", "3s", "/tmp/x.wav"])
            #expect(lone.status == 64 && lone.stderr.contains("--duration needs --stream"), "\(lone)")
            #expect(runtime.mediaEntries().isEmpty)
        }
    }
}
