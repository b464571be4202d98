import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Broken, missing and unreadable inputs, and a missing device: the documented exit code,
/// exactly one `announce: PATH: reason` line on stderr, nothing on stdout, nothing played.
@Suite("Bad inputs")
struct BadInputTests {
    struct BadCase: Sendable, CustomTestStringConvertible {
        var file: String
        var status: Int32
        var testDescription: String { "\(file) → \(status)" }
    }

    static let cases: [BadCase] = [
        BadCase(file: "bad/empty.wav", status: 65),
        BadCase(file: "bad/truncated-header.wav", status: 65),
        BadCase(file: "bad/random.mp3", status: 65),
        BadCase(file: "bad/text.wav", status: 65),
        BadCase(file: "bad/zero-channels.wav", status: 65),
        BadCase(file: "bad/zero-rate.wav", status: 65),
        BadCase(file: "bad/dir.wav", status: 66),
        BadCase(file: "bad/does-not-exist.wav", status: 66)
    ]

    /// Exit status, one stderr line naming `subject`, empty stdout.
    static func expectOneError(
        _ outcome: Outcome, status: Int32, naming subject: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(outcome.signal == nil, "crashed: \(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.status == status, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.stdout.isEmpty, "stdout: \(outcome.stdout.debugDescription)", sourceLocation: sourceLocation)
        let lines = outcome.stderrLines
        #expect(lines.count == 1, "exactly one stderr line expected: \(lines)", sourceLocation: sourceLocation)
        if let line = lines.first {
            #expect(
                line.hasPrefix("announce: \(subject)"),
                "\(line.debugDescription) should start with 'announce: \(subject)'",
                sourceLocation: sourceLocation)
        }
        #expect(outcome.stderr.hasSuffix("\n"), "the line ends with a newline", sourceLocation: sourceLocation)
    }

    @Test("play: exit code, one line naming the file, nothing played", arguments: cases)
    func play(_ test: BadCase) async throws {
        let path = try Harness.fixture(test.file)
        let play = try await Playback.run([path], debug: false, label: "bad")
        Self.expectOneError(play.outcome, status: test.status, naming: "\(path): ")
        #expect(play.capturedNothing, "something was played")
    }

    @Test("info: the same exit code and line", arguments: cases)
    func info(_ test: BadCase) async throws {
        let path = try Harness.fixture(test.file)
        let outcome = try await Runner.announce(["info", "--json", path])
        Self.expectOneError(outcome, status: test.status, naming: "\(path): ")
    }

    /// A WAV of a kind libsndfile reads that fails for another reason keeps libsndfile's own words:
    /// it is not called an unsupported format.
    @Test(
        "a WAV with 0 channels or 0 Hz: 65 with libsndfile's reason, from play and info",
        arguments: [
            ("bad/zero-channels.wav", "Channel count is zero."), ("bad/zero-rate.wav", "SF_INFO struct incomplete.")
        ])
    func malformedWAV(_ file: String, _ reason: String) async throws {
        let path = try Harness.fixture(file)
        let play = try await Playback.run([path], debug: false, label: "malformed")
        let info = try await Runner.announce(["info", path])
        for outcome in [play.outcome, info] {
            Self.expectOneError(outcome, status: 65, naming: "\(path): ")
            #expect(
                outcome.stderr.hasPrefix("announce: \(path): not decodable audio (") && outcome.stderr.contains(reason),
                "\(outcome)")
        }
    }

    /// A 16-bit stereo PCM WAV of `frames` frames of a square wave whose header says `rate`.
    static func wav(rate: UInt32, frames: Int, named name: String) throws -> String {
        var bytes: [UInt8] = []
        func add(_ value: UInt32, _ count: Int) {
            for i in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
        }
        let data = UInt32(frames * 4)
        bytes += Array("RIFF".utf8)
        add(36 + data, 4)
        bytes += Array("WAVEfmt ".utf8)
        for (value, count) in [(16, 4), (1, 2), (2, 2), (rate, 4), (rate * 4, 4), (4, 2), (16, 2)] as [(UInt32, Int)] {
            add(value, count)
        }
        bytes += Array("data".utf8)
        add(data, 4)
        for frame in 0..<frames { for _ in 0..<2 { add(frame % 2 == 0 ? 8000 : UInt32(UInt16(bitPattern: -8000)), 2) } }
        let path = try Harness.workResult.get().appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// libebur128 measures nothing below 16 Hz: such a header is refused as the decoders
    /// refuse one over 768 kHz, not met by an internal error (70) at the level stage.
    @Test("a WAV whose header says 15 Hz: 65 naming the rates supported, from play, info and alert; 16 Hz plays")
    func sampleRateBelowTheFloor() async throws {
        let slow = try Self.wav(rate: 15, frames: 30, named: "fifteen-hertz.wav")
        let line = "announce: \(slow): header says 15 Hz; 16 to 768000 Hz is supported"
        for arguments in [["play", "-d", "null", slow], ["info", slow], ["alert", "--wait", "-d", "null", slow]] {
            let outcome = try await Runner.announce(arguments)
            Self.expectOneError(outcome, status: 65, naming: "\(slow): ")
            #expect(outcome.stderrLines == [line], "\(arguments)")
        }
        let lowest = try Self.wav(rate: 16, frames: 32, named: "sixteen-hertz.wav")
        let played = try await Runner.announce(["play", "-d", "null", lowest])
        #expect(played.status == 0 && played.stderr.isEmpty, "\(played)")
    }

    @Test("an empty file name is said as '': 66 from play, info and alert")
    func emptyName() async throws {
        for command in ["play", "info", "alert"] {
            let outcome = try await Runner.announce([command, ""])
            #expect(
                outcome.status == 66 && outcome.stderrLines == ["announce: '': no such file"], "\(command): \(outcome)")
        }
    }

    /// Headers that parse and no frame that decodes (mpg123 decodes none either): not a
    /// silent success.
    @Test("an MP3 whose frames all trim away → 65 'holds no audio frames', from play, info and info --json")
    func noAudioFrames() async throws {
        let path = try Harness.fixture("bad/no-audio-frames.mp3")
        let line = "announce: \(path): holds no audio frames"
        let play = try await Playback.run([path], debug: false, label: "no-frames")
        Self.expectOneError(play.outcome, status: 65, naming: "\(path): ")
        #expect(play.outcome.stderrLines == [line])
        for arguments in [["info", path], ["info", "--json", path]] {
            let outcome = try await Runner.announce(arguments)
            Self.expectOneError(outcome, status: 65, naming: "\(path): ")
            #expect(outcome.stderrLines == [line], "\(arguments)")
        }
    }

    @Test("a file without read permission → 66 (run as an unprivileged user when root)")
    func noPermission() async throws {
        let path = try Harness.fixture("bad/no-permission.wav")
        let arguments = ["play", path, "-d", "null"]
        let outcome: Outcome
        if getuid() == 0 {
            // Root reads anything: drop to nobody so the permission bits apply.
            let setpriv = "/usr/bin/setpriv"
            try #require(
                FileManager.default.isExecutableFile(atPath: setpriv),
                "running as root needs \(setpriv) (util-linux) to test as an unprivileged user")
            let binary = try Harness.sharedBinaryResult.get()
            let dropped = ["--reuid=65534", "--regid=65534", "--clear-groups"]
            let probe = try await Runner.run(setpriv, dropped + [binary, "info", try Harness.fixture("one-frame.wav")])
            try #require(
                probe.status == 0,
                """
                uid 65534 cannot run \(binary) on the fixtures (every directory on the way must be \
                world-searchable); \(probe)
                """)
            outcome = try await Runner.run(setpriv, dropped + [binary] + arguments)
        } else {
            try #require(access(path, R_OK) != 0, "\(path) is readable despite mode 000")
            outcome = try await Runner.announce(arguments)
        }
        Self.expectOneError(outcome, status: 66, naming: "\(path): ")
    }

    @Test("an unknown device → 69, the line names the device")
    func unknownDevice() async throws {
        let outcome = try await Runner.announce([
            "play", try Harness.fixture("wav16-stereo.wav"), "-d", "no_such_device"
        ])
        Self.expectOneError(outcome, status: 69, naming: "device 'no_such_device': ")
    }

    @Test(
        "a bad file with good ones: nothing plays, the bad file's code is returned",
        arguments: [
            (["wav16-stereo.wav", "bad/text.wav"], "bad/text.wav", Int32(65)),
            (["bad/does-not-exist.wav", "wav16-stereo.wav"], "bad/does-not-exist.wav", Int32(66)),
            (["wav16-stereo.wav", "flac16.flac", "bad/zero-rate.wav"], "bad/zero-rate.wav", Int32(65))
        ])
    func badAmongGood(_ files: [String], _ bad: String, _ status: Int32) async throws {
        let play = try await Playback.run(try files.map(Harness.fixture), debug: false, label: "mixed")
        Self.expectOneError(play.outcome, status: status, naming: "\(try Harness.fixture(bad)): ")
        #expect(play.capturedNothing, "something was played before the bad file was found")
    }

    @Test("an MP3 cut mid-frame plays what decodes, with one 'truncated' warning")
    func mp3CutMidFrame() async throws {
        let path = try Harness.fixture("bad/cut-mid-frame.mp3")
        let play = try await Playback.run([path], label: "cut")
        if let output = play.output() {
            let reference = try PCM.reference(try Harness.fixture("bad/cut-mid-frame.mp3.ref.f32"), channels: 2)
                .quantised(to: .int32)  // what the file device gets
            try #require(reference.frames > 10_000, "the reference decode of the cut file is too short")
            expectSamples(output, match: reference, tolerance: Tolerance.exact, "cut MP3 vs mpg123's decode of it")
            #expect(play.debugLines.first?.frames == reference.frames)
        }
        // Without debug logging, stderr is just the warning.
        let quiet = try await Playback.run([path], debug: false, label: "cut")
        #expect(quiet.outcome.status == 0, "\(quiet.outcome)")
        #expect(quiet.outcome.stdout.isEmpty)
        let lines = quiet.outcome.stderrLines
        #expect(lines.count == 1, "one warning line expected: \(lines)")
        if let line = lines.first {
            #expect(line.hasPrefix("announce: "), "\(line)")
            #expect(line.contains(path), "the warning names the file: \(line)")
            #expect(line.contains("truncated"), "the warning says truncated: \(line)")
        }
        // -q silences warnings.
        let silent = try await Playback.run([path], ["-q"], debug: false, label: "cut")
        #expect(silent.outcome.status == 0 && silent.outcome.stderr.isEmpty, "-q: \(silent.outcome)")
    }

    @Test("an MP3 whose format changes mid-stream plays only the first part, with one warning")
    func mp3FormatSplice() async throws {
        let path = try Harness.fixture("bad/spliced-formats.mp3")
        let play = try await Playback.run([path], label: "splice")
        if let output = play.output() {
            let reference = try Clips.load(Clips.named("cbr128.mp3"))
            // Anything after the first part would be audio in another format read as this one.
            expectSamples(output, match: reference, tolerance: Tolerance.exact, "spliced MP3 vs its first part")
            #expect(play.debugLines.first?.frames == reference.frames)
        }
        let quiet = try await Playback.run([path], debug: false, label: "splice")
        #expect(quiet.outcome.status == 0, "\(quiet.outcome)")
        let lines = quiet.outcome.stderrLines
        #expect(
            lines.count == 1 && lines[0].hasPrefix("announce: warning: \(path): ")
                && lines[0].contains("format changes"),
            "one warning naming the file: \(lines)")
    }

    @Test("info on an MP3 cut mid-frame counts the frames that play")
    func mp3CutMidFrameInfo() async throws {
        let path = try Harness.fixture("bad/cut-mid-frame.mp3")
        let reference = try PCM.reference(try Harness.fixture("bad/cut-mid-frame.mp3.ref.f32"), channels: 2)
        let outcome = try await Runner.announce(["info", "--json", path])
        try #require(outcome.status == 0, "\(outcome)")
        let info = try JSONDecoder().decode(InfoTests.Description.self, from: Data(outcome.stdout.utf8))
        // A damaged MP3 is counted by decoding, so info says exactly what play plays.
        #expect(info.frames == reference.frames)
    }

    @Test("a WAV whose header claims a huge data size plays exactly the samples present")
    func hugeDataSize() async throws {
        let path = try Harness.fixture("bad/huge-data-size.wav")
        let play = try await Playback.run([path], label: "huge")
        guard let output = play.output() else { return }
        let reference = try PCM.reference(try Harness.fixture("bad/huge-data-size.wav.ref.s16"), channels: 2)
        expectSamples(output, match: reference, tolerance: Tolerance.exact, "huge data size vs the real samples")
        #expect(play.debugLines.first?.frames == reference.frames)
    }
}

/// Out-of-range and malformed options: usage error 64, nothing played.
@Suite("Usage errors")
struct UsageTests {
    static let cases: [[String]] = [
        ["--volume", "2"],
        ["--volume", "-0.5"],
        ["--pan", "3"],
        ["--pan=-1.5"],
        ["--loops", "-2"],
        ["--loops=-2"],
        ["--volume", "0.5", "--gain", "-3"],
        ["--volume", "0.5", "--gain=-3"],
        ["--start", "abc"],
        ["--start", "-1s"],
        ["--start", "2s"],  // past the end of a 1 s clip
        ["--loops", "many"]
    ]

    @Test("exit 64 and nothing played", arguments: cases)
    func usage(_ options: [String]) async throws {
        let play = try await Playback.run(
            [try Harness.fixture("wav16-stereo.wav")], options, debug: false, label: "usage")
        #expect(play.outcome.status == 64, "\(play.outcome)")
        #expect(play.outcome.signal == nil)
        #expect(play.outcome.stdout.isEmpty, "stdout: \(play.outcome.stdout)")
        #expect(!play.outcome.stderr.isEmpty, "a usage error says why")
        #expect(play.capturedNothing, "something was played")
    }

    /// Said in the option's words, not the request's (`items[0]: tag …`).
    @Test("--tag empty or over 256 bytes → 64 naming --tag", arguments: ["", String(repeating: "t", count: 257)])
    func badTag(_ tag: String) async throws {
        let play = try await Playback.run(
            [try Harness.fixture("wav16-stereo.wav")], ["--tag", tag], debug: false, label: "tag")
        #expect(play.outcome.status == 64, "\(play.outcome)")
        #expect(play.outcome.stderr.hasPrefix("announce: --tag must be 1 to 256 bytes"), "\(play.outcome.stderr)")
        #expect(play.capturedNothing, "something was played")
    }

    @Test("no files → 64")
    func noFiles() async throws {
        let outcome = try await Runner.announce(["play", "-d", "null"])
        #expect(outcome.status == 64, "\(outcome)")
    }
}

/// Scripts and cron get silence: no progress line when stderr is not a terminal.
@Suite("Quiet in pipes")
struct PipeTests {
    @Test("play with stdout and stderr not a TTY prints nothing", arguments: ["wav16-stereo.wav", "cbr128.mp3"])
    func silentInPipes(_ name: String) async throws {
        let play = try await Playback.run([try Harness.fixture(name)], debug: false, label: "pipe")
        #expect(play.outcome.status == 0, "\(play.outcome)")
        #expect(play.outcome.stdout.isEmpty, "stdout: \(play.outcome.stdout.debugDescription)")
        #expect(play.outcome.stderr.isEmpty, "stderr: \(play.outcome.stderr.debugDescription)")
        #expect(!play.capturedNothing, "nothing was played")
    }
}
