import Foundation
import Testing

/// Every good format, played onto ALSA's file device, is its reference decode sample for sample.
@Suite("Formats play as their reference decodes")
struct FormatTests {
    @Test("plays sample for sample like the reference decode", arguments: Clips.all)
    func playsLikeReference(_ clip: Clip) async throws {
        let path = try Harness.fixture(clip.file)
        let play = try await Playback.run([path], label: clip.file)
        guard let output = play.output() else { return }
        #expect(play.outcome.stdout.isEmpty)
        #expect(play.otherStderrLines.isEmpty, "unexpected warnings or errors")
        let line = try #require(
            play.debugLines.count == 1 ? play.debugLines.first : nil,
            "one debug line expected: \(play.debugLines)")
        #expect(line.path == path)
        // The file device takes anything, so the source's exact format is what it gets.
        #expect(line.format == clip.format)
        #expect(line.sampleRate == clip.sampleRate)
        #expect(line.channels == clip.channels)

        let full = try Clips.load(clip)
        #expect(line.frames == full.frames, "frames played vs the reference length")
        for reference in clip.references {
            let expected = try Clips.load(clip, reference)
            expectSamples(
                output, match: expected, tolerance: reference.tolerance,
                outputMayContinue: !reference.coversWholeClip,
                "\(clip.file) vs \(reference.file) (\(reference.note))")
        }
    }

    @Test(
        "5.1 Vorbis and Opus play in WAV order, as ffmpeg decodes them", arguments: ["vorbis-6ch.ogg", "opus-6ch.opus"])
    func surroundChannelOrder(_ file: String) async throws {
        let path = try Harness.fixture(file)
        // ffmpeg's decodes: libopus's floats are bit-identical; its own Vorbis decoder rounds
        // differently (seen 3e-7) and drops the last 128 frames.
        let reference = try PCM.reference(path + ".ref.f32", channels: 6).quantised(to: .int32)
        let play = try await Playback.run([path], label: file)
        guard let output = play.output() else { return }
        try #require(output.channels == 6)
        expectSamples(
            output, match: reference, tolerance: file.hasSuffix(".ogg") ? 1e-6 : Tolerance.exact,
            outputMayContinue: file.hasSuffix(".ogg"), "\(file) vs ffmpeg's decode")
        // Each channel carries its own tone: 300 Hz front left ... 800 Hz back right (but the
        // LFE's 600 Hz, which libvorbis mostly drops: the comparison above covers that channel).
        let rate = 48000.0
        for (channel, tone) in [300.0, 400, 500, 600, 700, 800].enumerated() where channel != 3 {
            let samples = stride(from: channel, to: min(output.samples.count, 6 * 12000), by: 6).map {
                output.samples[$0]
            }
            let own = ToneAnalysis.power(of: tone, in: samples[...], rate: rate)
            let others =
                [300.0, 400, 500, 600, 700, 800].filter { $0 != tone }
                .map { ToneAnalysis.power(of: $0, in: samples[...], rate: rate) }.max() ?? 0
            #expect(own > 10 * others, "channel \(channel) should carry \(Int(tone)) Hz")
        }
    }

    @Test("a 1-frame WAV plays its one frame")
    func oneFrame() async throws {
        let play = try await Playback.run([try Harness.fixture("one-frame.wav")], label: "one-frame")
        guard let output = play.output() else { return }
        #expect(output.format == .int16)
        try #require(output.frames >= 1, "no frame captured")
        #expect(output.samples[0] * 32768 == 12345)
        #expect(output.samples[1] * 32768 == -23456)
        #expect(output.frames(from: 1).samples.allSatisfy { $0 == 0 }, "padding after the frame is not silence")
    }

    @Test("two files in one play are played back to back, in order, on one open device")
    func backToBack() async throws {
        let first = Clips.named("wav16-stereo.wav")
        let second = Clips.named("wav16-second.wav")
        let paths = [try Harness.fixture(first.file), try Harness.fixture(second.file)]
        let play = try await Playback.run(paths, label: "back-to-back")
        guard let output = play.output() else { return }
        #expect(play.debugLines.map(\.path) == paths)
        // Had the device been reopened for the second file, the capture would hold only it.
        expectSamples(
            output, match: try Clips.load(first) + Clips.load(second), tolerance: Tolerance.exact,
            "first then second")
    }

    @Test("the same file twice plays twice")
    func sameFileTwice() async throws {
        let clip = Clips.named("flac16.flac")
        let path = try Harness.fixture(clip.file)
        let play = try await Playback.run([path, path], label: "twice")
        guard let output = play.output() else { return }
        let reference = try Clips.load(clip)
        expectSamples(output, match: reference + reference, tolerance: Tolerance.exact, "flac16 twice")
    }
}

/// `announce info --json`: one JSON object per file.
@Suite("info --json")
struct InfoTests {
    struct Description: Decodable {
        var path: String
        var container: String
        var codec: String
        var sampleRate: Int
        var channels: Int
        var frames: Int?
        var duration: Double?
    }

    @Test("reports container, rate, channels and the decoded length", arguments: Clips.all)
    func describes(_ clip: Clip) async throws {
        let path = try Harness.fixture(clip.file)
        let outcome = try await Runner.announce(["info", path, "--json"])
        try #require(outcome.status == 0 && outcome.signal == nil, "\(outcome)")
        #expect(outcome.stderr.isEmpty)
        let lines = outcome.stdout.split(separator: "\n")
        try #require(lines.count == 1, "one JSON line expected: \(outcome.stdout)")
        let info = try JSONDecoder().decode(Description.self, from: Data(lines[0].utf8))
        let frames = try Clips.load(clip).frames
        #expect(info.path == path)
        #expect(info.container == clip.container)
        #expect(info.sampleRate == clip.sampleRate)
        #expect(info.channels == clip.channels)
        #expect(info.frames == frames, "frames vs the reference decode's length")
        #expect(!info.codec.isEmpty)
        if let duration = info.duration {
            #expect(abs(duration - Double(frames) / Double(clip.sampleRate)) < 1e-9)
        } else {
            Issue.record("no duration")
        }
    }

    @Test("several files give one line each, in order")
    func severalFiles() async throws {
        let names = ["flac24.flac", "cbr128.mp3", "clip.caf", "opus.opus"]
        let paths = try names.map { try Harness.fixture($0) }
        let outcome = try await Runner.announce(["info", "--json"] + paths)
        try #require(outcome.status == 0, "\(outcome)")
        let decoded = try outcome.stdout.split(separator: "\n").map {
            try JSONDecoder().decode(Description.self, from: Data($0.utf8))
        }
        #expect(decoded.map(\.path) == paths)
        #expect(decoded.map(\.container) == names.map { Clips.named($0).container })
    }
}

extension InfoTests {
    @Test("several files with errors: every good one described, every error on its own line, the highest code")
    func errorsAmongFiles() async throws {
        let good = try Harness.fixture("flac16.flac")
        let text = try Harness.fixture("bad/text.wav")
        let missing = try Harness.fixture("bad/does-not-exist.wav")
        let random = try Harness.fixture("bad/random.mp3")
        let outcome = try await Runner.announce(["info", "--json", text, good, missing, random])
        #expect(outcome.status == 66, "65 and 66: the highest wins; \(outcome)")
        let described = try outcome.stdout.split(separator: "\n").map {
            try JSONDecoder().decode(Description.self, from: Data($0.utf8))
        }
        #expect(described.map(\.path) == [good])
        #expect(
            outcome.stderrLines.map { $0.components(separatedBy: ": ").prefix(2).joined(separator: ": ") }
                == ["announce: \(text)", "announce: \(missing)", "announce: \(random)"], "\(outcome.stderrLines)")
    }

    @Test("FLAC says FLAC and its bit depth; LAME's CBR is CBR and its VBR is VBR")
    func codecNames() async throws {
        let expected = [
            "flac16.flac": "FLAC 16-bit", "flac24.flac": "FLAC 24-bit",
            "cbr128.mp3": "MPEG-1 Layer III 128 kbit/s CBR", "vbr.mp3": "MPEG-1 Layer III VBR",
            "vbr-no-xing.mp3": "MPEG-1 Layer III VBR"
        ]
        for (file, codec) in expected {
            let outcome = try await Runner.announce(["info", "--json", try Harness.fixture(file)])
            let info = try JSONDecoder().decode(Description.self, from: Data(outcome.stdout.utf8))
            #expect(info.codec == codec, "\(file)")
        }
    }
}

@Suite("Multi-route and alerts on the file device") struct RouteAndAlertTests {
    @Test("multi-route plays the same clip, whole, on every device given")
    func multiRoute() async throws {
        let clip = Clips.named("wav16-stereo.wav")
        let path = try Harness.fixture(clip.file)
        let first = try Harness.capturePath("route-a")
        let second = try Harness.capturePath("route-b")
        let outcome = try await Runner.announce([
            "play", path, "--category", "multi-route",
            "-d", Harness.fileDevice(first), "-d", Harness.fileDevice(second)
        ])
        #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
        let reference = try Clips.load(clip)
        for capture in [first, second] {
            let wav = try WAVCapture(path: capture)
            expectSamples(
                PCM(format: .int16, channels: wav.channels, bytes: wav.data), match: reference,
                tolerance: Tolerance.exact, capture)
        }
    }

    @Test("an alert alone plays sample-exact and --wait exits 0 once it was heard")
    func alert() async throws {
        let clip = Clips.named("wav16-stereo.wav")
        let path = try Harness.fixture(clip.file)
        let capture = try Harness.capturePath("alert")
        let outcome = try await Runner.announce(["alert", path, "--wait", "-d", Harness.fileDevice(capture)])
        #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
        let wav = try WAVCapture(path: capture)
        expectSamples(
            PCM(format: .int16, channels: wav.channels, bytes: wav.data), match: try Clips.load(clip),
            tolerance: Tolerance.exact, "alert")
    }
}
