import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play URL` (http, https, file): the daemon downloads the body through libcurl into
/// the runtime directory's media/, it plays exactly as the same file given by path, messages
/// and events name the URL, failures are the item's outcome with the documented status, and
/// nothing is left in media/ after the outcome. A local server (Tests/Servers/httpd.py) serves
/// the fixtures.
@Suite("play URL (http, file)")
struct URLTests {
    static let formats = ["wav16-stereo.wav", "cbr128.mp3", "flac16.flac", "vorbis.ogg"]
    /// A proxy in the tests' environment must not take the local server's requests.
    static let direct: [String: String?] = ["no_proxy": "127.0.0.1", "NO_PROXY": "127.0.0.1"]

    @Test(
        "an http URL plays bit for bit as the file played by path (sox reads both captures the same)",
        arguments: formats)
    func httpPlaysAsTheFile(_ file: String) async throws {
        let server = try HTTPTestServer(directory: try Harness.fixtures().path)
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            let path = try Harness.fixture(file)
            let url = server.url(file)
            let byPath = try await runtime.playCapture([path], label: "path-" + file)
            let byURL = try await runtime.playCapture([url], label: "url-" + file, environment: Self.direct)
            try expectSameCapture(byURL, as: byPath, file)
            #expect(byURL.debugLines.map(\.path) == [url], "debug lines name the URL: \(byURL.outcome)")
            #expect(byURL.debugLines.map(\.frames) == byPath.debugLines.map(\.frames))
            #expect(runtime.mediaEntries().isEmpty, "media left after the outcome: \(runtime.mediaEntries())")
        }
    }

    @Test("a file:// URL plays as the file; --json names the URL", arguments: ["flac16.flac", "cbr128.mp3"])
    func fileURL(_ file: String) async throws {
        try await withDaemonRuntime { runtime in
            let path = try Harness.fixture(file)
            let url = "file://" + path
            let byPath = try await runtime.playCapture([path], label: "file-path-" + file)
            let byURL = try await runtime.playCapture([url], label: "file-url-" + file)
            try expectSameCapture(byURL, as: byPath, url)
            let json = try await runtime.announce(["play", url, "-d", "null", "--json"])
            let paths = json.stdout.split(separator: "\n").compactMap { WireEvent(line: $0)?.path }
            #expect(json.status == 0 && paths == [url], "\(json)")
            #expect(runtime.mediaEntries().isEmpty, "media left after the outcome: \(runtime.mediaEntries())")
        }
    }

    @Test("a chain of redirects is followed; the item is named by the URL given")
    func redirects() async throws {
        let server = try HTTPTestServer(directory: try Harness.fixtures().path)
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            let path = try Harness.fixture("flac16.flac")
            let url = server.url("redirect/3/flac16.flac")
            let byPath = try await runtime.playCapture([path], label: "redirect-path")
            let byURL = try await runtime.playCapture([url], label: "redirect-url", environment: Self.direct)
            try expectSameCapture(byURL, as: byPath, url)
            #expect(byURL.debugLines.map(\.path) == [url])
            #expect(runtime.mediaEntries().isEmpty)
        }
    }

    @Test("bad URLs: one line naming the URL and the reason, the documented status, nothing left stored or queued")
    func badURLs() async throws {
        let server = try HTTPTestServer(directory: try Harness.fixtures().path)
        defer { server.stop() }
        let refusing = try RefusingPort()
        try await withDaemonRuntime { runtime in
            let closed = "http://127.0.0.1:\(refusing.port)/x.wav"
            // A FIFO no one writes: libcurl would wait on it for good.
            let fifo = try Harness.workResult.get().path + "/fifo-\(UUID().uuidString)"
            try #require(mkfifo(fifo, 0o600) == 0)
            defer { unlink(fifo) }
            let cases: [(what: String, url: String, environment: [String: String?], status: Int32, line: String)] = [
                ("404", server.url("missing.wav"), [:], 66, "\(server.url("missing.wav")): HTTP 404 File not found"),
                ("HTML", server.url("page"), [:], 65, "\(server.url("page")): not audio (text/html)"),
                (
                    "a redirect loop", server.url("loop"), [:], 66,
                    "\(server.url("loop")): more than 10 redirects (a redirect loop)"
                ),
                (
                    "connection refused", closed, [:], 66,
                    "\(closed): cannot connect to 127.0.0.1:\(refusing.port): Connection refused"
                ),
                (
                    "a missing file:// file", "file:///nonexistent/x.wav", [:], 66,
                    "file:///nonexistent/x.wav: cannot read the file (missing, or no permission)"
                ),
                ("a file:// FIFO", "file://" + fifo, [:], 66, "file://\(fifo): not a regular file"),
                (
                    "another scheme", "ftp://127.0.0.1/x.wav", [:], 66,
                    "ftp://127.0.0.1/x.wav: announce plays http, https and file URLs, not ftp"
                )
            ]
            for bad in cases {
                let outcome = try await runtime.announce(
                    ["play", bad.url, "-d", "null"], environment: bad.environment.merging(Self.direct) { $1 })
                #expect(outcome.status == bad.status, "\(bad.what): \(outcome)")
                #expect(outcome.stderrLines == ["announce: " + bad.line], "\(bad.what): \(outcome)")
                #expect(outcome.stdout.isEmpty)
                #expect(runtime.mediaEntries().isEmpty, "\(bad.what) left \(runtime.mediaEntries())")
            }
            #expect(try await runtime.status().queued.isEmpty)
        }
        // The daemon's limit (a debug build's, from the environment it starts in).
        try await withDaemonRuntime { runtime in
            let url = server.url("wav16-stereo.wav")
            let outcome = try await runtime.announce(
                ["play", url, "-d", "null"],
                environment: Self.direct.merging(["ANNOUNCE_TEST_MEDIA_LIMIT": "10000"]) { $1 })
            #expect(outcome.status == 65, "\(outcome)")
            #expect(
                outcome.stderrLines == [
                    "announce: \(url): more than 10000 bytes, the most announce downloads for one clip"
                ], "\(outcome)")
            #expect(runtime.mediaEntries().isEmpty, "left \(runtime.mediaEntries())")
        }
    }

    @Test("a server that accepts and never answers fails with 66 after the config file's stall-timeout")
    func stall() async throws {
        let server = try HTTPTestServer(directory: try Harness.fixtures().path)
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            let home = try Harness.workResult.get().path + "/stall-config-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
            try (Harness.baseConfig + "stall-timeout = 1s\n").write(
                toFile: home + "/announce/config", atomically: true, encoding: .utf8)
            // Timed on a thread of its own from a client started at once: the cooperative pool of a
            // loaded full run can be busy for many seconds, which is not the daemon's time.
            let started = monotonicNow()
            let play = try Runner.launch(
                ["play", server.url("stall"), "-d", "null"],
                environment: runtime.environment.merging(Self.direct.merging(["XDG_CONFIG_HOME": home]) { $1 }) { $1 },
                killAfter: 90)
            let elapsed = try await offPool {
                _ = play.child.waitForExit(timeout: 90)
                return monotonicNow() - started
            }
            let outcome = await play.outcome()
            #expect(outcome.status == 66, "\(outcome)")
            #expect(
                outcome.stderrLines == ["announce: \(server.url("stall")): no data for 1 s (the server stalled)"],
                "\(outcome)")
            // Not the default 30 s: the file's 1 s (a loaded machine starts the client slowly).
            #expect(elapsed >= 1 && elapsed < 25, "gave up after \(elapsed) s")
            #expect(runtime.mediaEntries().isEmpty, "left \(runtime.mediaEntries())")
        }
    }
}
