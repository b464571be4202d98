import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play URL` downloaded by the daemon: it plays while the body arrives, and a
/// download that a SIGKILL cut short goes on with a Range request (or from the start where the
/// server ignores ranges). Tests/Servers/httpd.py's gate holds back the second half of a body
/// until the test opens it, so "while it downloads" is a state the test sees, not a race.
@Suite("play URL while it downloads; Range resume after kill -9")
struct ProgressiveURLTests {
    static let direct = URLTests.direct

    /// A copy of `file` (a path, or a fixture's name) in a directory of its own, served with its gate closed.
    private func served(_ file: String) throws -> (server: HTTPTestServer, directory: String, gate: String) {
        let directory = try Harness.workResult.get().path + "/served-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let name = String(file.split(separator: "/").last ?? "")
        try FileManager.default.copyItem(
            atPath: file.hasPrefix("/") ? file : try Harness.fixture(file), toPath: directory + "/" + name)
        return (try HTTPTestServer(directory: directory, logging: true), directory, directory + "/" + name + ".open")
    }

    /// Waits for `condition`, polling (what it watches is another process's file), at most `timeout` s.
    private func until(_ what: String, timeout: Double = 20, _ condition: () -> Bool) async throws {
        let deadline = monotonicNow() + timeout
        while !condition() {
            guard monotonicNow() < deadline else { throw HarnessError("not within \(timeout) s: \(what)") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    private func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// 4 s of a plucked tone as `name` (by its extension: WAV by sox, MP3 and FLAC by ffmpeg):
    /// longer than ALSA's file plugin holds back before it writes (its buffer's length).
    private func fourSeconds(_ name: String) async throws -> String {
        let directory = try Harness.workResult.get().path + "/four-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let wav = directory + "/source.wav"
        let path = directory + "/" + name
        let sox = try await Runner.run(
            "sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "4", "pluck", "220", "vol", "0.5"])
        try #require(sox.status == 0, "\(sox)")
        if !name.hasSuffix(".wav") {
            let ffmpeg = try await Runner.run("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", wav, path])
            try #require(ffmpeg.status == 0, "\(ffmpeg)")
        } else {
            try FileManager.default.moveItem(atPath: wav, toPath: path)
        }
        return path
    }

    @Test(
        "the first half plays while the second is held back; the whole plays bit for bit as the file",
        arguments: ["progressive.wav", "progressive.mp3", "progressive.flac"])
    func playsWhileDownloading(_ name: String) async throws {
        let source = try await fourSeconds(name)
        let (server, _, gate) = try served(source)
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            let reference = try await runtime.playCapture([source], label: "progressive-path-" + name)
            let capture = try Harness.capturePath("progressive-" + name)
            let url = server.url("gate/" + name)
            let play = Task {
                try await runtime.announce(["play", url, "-d", Harness.fileDevice(capture)], environment: Self.direct)
            }
            // Audio reaches the device while the server still holds the second half back.
            let quarter = reference.capture.map { $0.data.count / 4 } ?? .max
            do {
                try await until("a quarter of the clip captured before the gate opens") { size(capture) > quarter }
            } catch {
                let media = runtime.mediaEntries().map { "\($0) \(size(runtime.mediaPath + "/" + $0))" }
                throw HarnessError(
                    "\(error): \(size(capture)) of \(quarter) bytes captured; media \(media); \(server.requests()); "
                        + "daemon.log \(runtime.daemonLogLines().suffix(4))")
            }
            #expect(
                !server.requests().contains("sent /gate/" + name), "the body was complete already: \(server.requests())"
            )
            FileManager.default.createFile(atPath: gate, contents: Data())
            let outcome = try await play.value
            #expect(outcome.status == 0, "\(outcome)")
            let played = Playback(
                outcome: outcome, capturePath: capture, debugLines: [], otherStderrLines: [],
                capture: try WAVCapture(path: capture))
            try expectSameCapture(played, as: reference, url)
            #expect(runtime.mediaEntries().isEmpty, "media left after the outcome: \(runtime.mediaEntries())")
        }
    }

    @Test(
        "kill -9 mid-download: the next daemon asks for the rest with a Range (or all of it from a server without ranges) and the item plays to its end",
        arguments: [("gate", 206), ("gate-norange", 200)])
    func resumesAfterKill(_ route: String, _ status: Int) async throws {
        let name = "wav16-stereo.wav"
        let (server, directory, gate) = try served(name)
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            let reference = try await runtime.playCapture([try Harness.fixture(name)], label: "resume-path-\(route)")
            let capture = try Harness.capturePath("resume-\(route)")
            let url = server.url("\(route)/\(name)")
            let play = Task {
                try await runtime.announce(["play", url, "-d", Harness.fileDevice(capture)], environment: Self.direct)
            }
            let half = size(directory + "/" + name) / 2
            // Half the body is in the media directory (the spooled partial download) and playing.
            do {
                try await until("half the body downloaded", timeout: 30) {
                    runtime.mediaEntries().contains {
                        !$0.hasPrefix(".") && !$0.hasSuffix(".head") && size(runtime.mediaPath + "/" + $0) >= half
                    }
                }
            } catch {
                let media = runtime.mediaEntries().map { "\($0) \(size(runtime.mediaPath + "/" + $0))" }
                throw HarnessError(
                    "\(error): media \(media); \(server.requests()); daemon.log \(runtime.daemonLogLines().suffix(4))")
            }
            // The crash; the waiting client starts the next daemon itself, as it would for a user.
            let first = try #require(runtime.lockPID)
            kill(first, SIGKILL)
            // Its lock goes with its descriptors (a zombie not yet reaped holds none); the waiting
            // client may have started the next daemon already.
            try await until("the killed daemon's lock released") { !runtime.daemonLockHeld || runtime.lockPID != first }
            FileManager.default.createFile(atPath: gate, contents: Data())
            let outcome = try await play.value
            #expect(outcome.status == 0, "the waiting client: \(outcome)")
            let requests = server.requests().filter { $0.hasPrefix("GET ") }
            #expect(requests.count == 2 && runtime.lockPID != first, "\(server.requests())")
            let resumed = try #require(requests.last)
            #expect(resumed.hasPrefix("GET /\(route)/\(name) range=bytes=\(half)- if-range=\""), "\(requests)")
            #expect(resumed.hasSuffix("-> \(status)"), "\(requests)")
            // What the second daemon played goes on from where the first was heard to, to the end.
            let played = try WAVCapture(path: capture)
            let whole = try #require(reference.capture).data
            #expect(
                !played.data.isEmpty && whole.count >= played.data.count
                    && whole.suffix(played.data.count) == played.data,
                "\(played.data.count) of \(whole.count) bytes, not the clip's end")
            #expect(runtime.mediaEntries().isEmpty, "media left after the outcome: \(runtime.mediaEntries())")
        }
    }

    @Test("cancelled mid-download: the outcome is cancelled, the transfer ends and nothing is left in media/")
    func cancelledMidDownload() async throws {
        let name = "wav16-stereo.wav"
        let (server, directory, gate) = try served(name)
        defer { server.stop() }
        defer { FileManager.default.createFile(atPath: gate, contents: Data()) }
        try await withDaemonRuntime { runtime in
            // Queued behind a paused queue: it downloads while it waits, and never plays.
            try await runtime.control("pause")
            let queued = try await runtime.announce(
                ["play", "--no-wait", server.url("gate/" + name), "-d", "null"], environment: Self.direct)
            try #require(queued.status == 0, "\(queued)")
            let half = size(directory + "/" + name) / 2
            try await until("half the body downloaded while queued") {
                runtime.mediaEntries().contains {
                    !$0.hasPrefix(".") && !$0.hasSuffix(".head") && size(runtime.mediaPath + "/" + $0) >= half
                }
            }
            let id = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let cancelled = try await runtime.announce(["cancel", id])
            #expect(cancelled.status == 0, "\(cancelled)")
            try await until("media/ empty after the cancel") { runtime.mediaEntries().isEmpty }
            // The transfer ends: the daemon hangs up on the server (within libcurl's second).
            try await until("the daemon hung up on the server", timeout: 5) {
                server.requests().contains("closed /gate/" + name)
            }
            #expect(runtime.mediaEntries().isEmpty, "\(runtime.mediaEntries())")
        }
    }
}
