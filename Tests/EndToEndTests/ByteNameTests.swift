import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// File names are bytes on Linux, and need not be UTF-8: a Latin-1 `caf\xe9.wav`, a lone 0xff.
/// Such names are made and passed by /bin/sh with printf (the Runner passes Swift Strings,
/// which cannot hold them), and each play is compared, read back by sox, with the same file
/// played under a UTF-8 name.
@Suite("File names that are not UTF-8")
struct ByteNameTests {
    /// printf formats of names that are not UTF-8 (each with the file's extension after it).
    static let latin1 = #"caf\351"#
    static let loneFF = #"\377"#

    /// A fresh directory holding `fixture` as `plain.EXT` and under each of `names` + `.EXT`.
    private func directory(with fixture: String, names: [String]) async throws -> (path: String, ext: String) {
        let path = try Harness.workResult.get().path + "/names-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let ext = (fixture as NSString).pathExtension
        try FileManager.default.copyItem(atPath: try Harness.fixture(fixture), toPath: path + "/plain." + ext)
        for name in names {
            let copy = try await sh(#"cp "$1/plain.$2" "$1/$(printf "$3").$2""#, [path, ext, name])
            try #require(copy.status == 0, "\(copy)")
        }
        return (path, ext)
    }

    /// `sh -c SCRIPT sh ARGS...` in the harness environment (plus `environment`).
    private func sh(_ script: String, _ arguments: [String], environment: [String: String?] = [:]) async throws
        -> Outcome
    {
        try await Runner.run("/bin/sh", ["-c", script, "sh"] + arguments, environment: environment)
    }

    /// `announce SUBCOMMAND <the name printf makes of NAME> OPTIONS...` run in `directory`.
    private func announce(
        _ subcommand: String, name: String, in directory: String, _ options: [String] = [],
        environment: [String: String?] = [:]
    ) async throws -> Outcome {
        try await sh(
            #"cd "$1" && b=$2 s=$3 n=$(printf "$4") && shift 4 && exec "$b" "$s" "$n" "$@""#,
            [directory, try Harness.binary(), subcommand, name] + options, environment: environment)
    }

    /// The capture's samples as sox reads them (raw, in the captured encoding); never empty.
    private func soxSamples(_ capture: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Data {
        let raw = capture + ".raw"
        let read = try await Runner.run("sox", [capture, "-t", "raw", raw])
        try #require(read.status == 0, "sox \(capture): \(read)", sourceLocation: sourceLocation)
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        try #require(!data.isEmpty, "sox read no samples from \(capture)", sourceLocation: sourceLocation)
        return data
    }

    @Test(
        "a WAV and an MP3 named caf\\xe9 or \\xff play bit-exact as under a UTF-8 name, relative and absolute",
        arguments: ["wav16-stereo.wav", "cbr128.mp3"])
    func playsBitExact(_ fixture: String) async throws {
        let (dir, ext) = try await directory(with: fixture, names: [Self.latin1, Self.loneFF])
        let reference = try Harness.capturePath("plain-" + ext)
        let plain = try await Runner.announce(["play", dir + "/plain." + ext, "-d", Harness.fileDevice(reference)])
        try #require(plain.status == 0, "\(plain)")
        let expected = try await soxSamples(reference)
        // Relative (made absolute as bytes by the client) and absolute, for each name.
        for name in [Self.latin1, Self.loneFF] {
            for form in [name + "." + ext, dir + "/" + name + "." + ext] {  // dir: no % or \ for printf
                let capture = try Harness.capturePath("bytes-" + ext)
                let play = try await announce("play", name: form, in: dir, ["-d", Harness.fileDevice(capture)])
                #expect(play.status == 0 && play.stderr.isEmpty, "\(form): \(play)")
                #expect(try await soxSamples(capture) == expected, "\(form): the capture differs from plain.\(ext)'s")
            }
        }
    }

    @Test("info describes such a file under its lossy name, as it does the same file under a UTF-8 name")
    func info() async throws {
        let (dir, _) = try await directory(with: "cbr128.mp3", names: [Self.latin1])
        let plain = try await Runner.announce(["info", "--json", dir + "/plain.mp3"])
        let bytes = try await announce("info", name: Self.latin1 + ".mp3", in: dir, ["--json"])
        #expect(bytes.status == 0 && bytes.stderr.isEmpty, "\(bytes)")
        let object = { (text: String) in try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary }
        let described = try #require(try object(bytes.stdout))
        #expect(described["path"] as? String == "caf\u{FFFD}.mp3")
        let reference = try #require(try object(plain.stdout))
        for key in ["frames", "sampleRate", "channels", "codec", "container"] {
            #expect(described[key] as? NSObject == reference[key] as? NSObject, "\(key)")
        }
        let text = try await announce("info", name: Self.latin1 + ".mp3", in: dir)
        #expect(text.status == 0 && text.stdout.hasPrefix("caf\u{FFFD}.mp3\n"), "\(text)")
    }

    /// Both open the file a second time, by its bytes: the count made alongside a play
    /// (LengthCount) and `info`'s scan (libFLAC's fresh handle).
    @Test(
        "an MP3 without Xing and a FLAC whose total is 0, named caf\\xe9, are counted exactly by play and info",
        arguments: ["vbr-no-xing.mp3", "damaged/zero-total.flac"])
    func countedExactly(_ fixture: String) async throws {
        let (dir, ext) = try await directory(with: fixture, names: [Self.latin1])
        let reference = try Harness.fixture(fixture) + (ext == "mp3" ? ".ref.f32" : ".ref.s16")
        let frames = try PCM.reference(reference, channels: 2).frames
        let play = try await announce("play", name: Self.latin1 + "." + ext, in: dir, ["--json", "-d", "null"])
        #expect(play.status == 0 && play.stderr.isEmpty, "\(play)")
        let finished = try #require(
            try play.stdout.split(separator: "\n").compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? NSDictionary
            }.first { $0["event"] as? String == "finished" }, "no finished event: \(play.stdout)")
        let duration = try #require(finished["duration"] as? Double, "\(finished)")
        #expect(
            abs(duration - Double(frames) / 44100) < 0.001,
            "duration \(duration) s; decoded \(Double(frames) / 44100) s")
        let info = try await announce("info", name: Self.latin1 + "." + ext, in: dir, ["--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? NSDictionary, "\(info)")
        #expect(object["frames"] as? Int == frames, "\(info)")
    }

    @Test("a missing file whose name is not UTF-8 is named lossily in one line, exit 66")
    func missing() async throws {
        let dir = try Harness.workResult.get().path
        for subcommand in ["play", "info", "alert"] {
            let result = try await announce(subcommand, name: #"nope\351.wav"#, in: dir)
            #expect(result.status == 66, "\(subcommand): \(result)")
            #expect(result.stderrLines == ["announce: nope\u{FFFD}.wav: no such file"], "\(subcommand): \(result)")
        }
    }

    @Test("alert plays such a file as it plays the same file under a UTF-8 name")
    func alert() async throws {
        let (dir, _) = try await directory(with: "wav16-second.wav", names: [Self.loneFF])
        let reference = try Harness.capturePath("alert-plain")
        let plain = try await Runner.announce([
            "alert", "--wait", dir + "/plain.wav", "-d", Harness.fileDevice(reference)
        ])
        try #require(plain.status == 0, "\(plain)")
        let capture = try Harness.capturePath("alert-bytes")
        let alert = try await announce(
            "alert", name: Self.loneFF + ".wav", in: dir, ["--wait", "-d", Harness.fileDevice(capture)])
        #expect(alert.status == 0 && alert.stderr.isEmpty, "\(alert)")
        #expect(try await soxSamples(capture) == (try await soxSamples(reference)))
    }

    @Test("a spooled item with pathBytes survives kill -9 of the daemon and then plays bit-exact")
    func survivesCrash() async throws {
        let (dir, _) = try await directory(with: "wav16-stereo.wav", names: [Self.latin1])
        try await withDaemonRuntime { runtime in
            let reference = try Harness.capturePath("crash-plain")
            let capture = try Harness.capturePath("crash-bytes")
            let first = try await runtime.startDaemon(device: "null")
            let plain = try await runtime.announce(["play", dir + "/plain.wav", "-d", Harness.fileDevice(reference)])
            try #require(plain.status == 0, "\(plain)")
            try await runtime.control("pause")
            let queued = try await announce(
                "play", name: Self.latin1 + ".wav", in: dir,
                ["--no-wait", "-d", Harness.fileDevice(capture)], environment: runtime.environment)
            try #require(queued.status == 0, "\(queued)")
            let id = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            // The spool keeps the bytes (base64), which no String could.
            let entry = try Data(contentsOf: URL(fileURLWithPath: runtime.spoolPath + "/\(id).json"))
            let clip = try #require(
                (try JSONSerialization.jsonObject(with: entry) as? NSDictionary)?["clip"] as? NSDictionary)
            let bytes = try #require((clip["pathBytes"] as? String).flatMap { Data(base64Encoded: $0) })
            #expect(bytes == Data((dir + "/caf").utf8) + [0xE9] + Data(".wav".utf8))
            #expect(clip["path"] as? String == dir + "/caf\u{FFFD}.wav")

            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: 10))
            try await runtime.startDaemon(device: "null")
            let waiter = try runtime.client()
            let reply = try await offPool { try waiter.call(#"{"v":1,"op":"wait","ids":["\#(id)"]}"#) }
            #expect(reply.ok && reply.ids == [id], "\(reply)")
            try await runtime.control("resume")
            let finished = try await offPool { try waiter.events { $0.event == "finished" && $0.id == id } }.last
            #expect(finished?.outcome?.kind == "played", "\(finished.map(String.init(describing:)) ?? "-")")
            #expect(finished?.path == dir + "/caf\u{FFFD}.wav")
            #expect(try await soxSamples(capture) == (try await soxSamples(reference)))
        }
    }

    @Test("malformed pathBytes on the socket: one 64 reply naming the field, and the daemon keeps running")
    func malformedOnTheSocket() async throws {
        try await withDaemonRuntime { runtime in
            let daemon = try await runtime.startDaemon(device: "null")
            let clip = #""path":"/x.wav","gain":1,"pan":0,"loops":0"#
            let cases = [
                (#""%%""#, "malformed request: items[0].clip.pathBytes: invalid value"),
                ("[1,2]", "malformed request: items[0].clip.pathBytes: expected String"),
                (#""eOk=""#, "items[0]: pathBytes must be an absolute path, not x\u{FFFD}"),  // x\xe9
                (#""L3gAeQ==""#, "items[0]: pathBytes contains a NUL byte")  // /x\0y
            ]
            for (value, message) in cases {
                let client = try runtime.client()
                let line = #"{"v":1,"op":"play","items":[{"clip":{\#(clip),"pathBytes":\#(value)}}]}"#
                let reply = try await offPool { try client.call(line) }
                #expect(!reply.ok && reply.error?.code == 64 && reply.error?.message == message, "\(value): \(reply)")
            }
            let status = try await runtime.status()
            #expect(status.pid == daemon.pid && daemon.isRunning)
            #expect(status.queued.isEmpty && status.playing == nil)
        }
    }
}
