import Foundation
import Testing

/// `--rate`, `--pitch` and `--skip-silence` by listening: what the daemon wrote to ALSA's file
/// device, measured by sox (`stat`: length, and the rough frequency from zero crossings).
@Suite("Tempo, pitch and silence skipping")
struct ReshapeTests {
    /// sox's measure of a WAV: seconds, and the rough frequency (truncated to a whole Hz).
    struct Measure {
        var seconds: Double
        var frequency: Double
    }

    static func measure(_ path: String) async throws -> Measure {
        let outcome = try await Runner.run("sox", [path, "-n", "stat"])
        try #require(outcome.status == 0, "sox stat: \(outcome)")
        func value(_ label: String) throws -> Double {
            let line = try #require(
                outcome.stderr.split(separator: "\n").first { $0.hasPrefix(label) }, "no \(label) in \(outcome.stderr)")
            return try #require(
                Double(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? ""), "\(line)")
        }
        return Measure(seconds: try value("Length (seconds)"), frequency: try value("Rough   frequency"))
    }

    /// Plays `fixture` with `options`; sox's measure of the capture, and the play.
    static func play(_ fixture: String, _ options: [String]) async throws -> (Measure, Playback) {
        let play = try await Playback.run([try Harness.fixture(fixture)], options, label: fixture + options.joined())
        try #require(play.outcome.status == 0 && play.capture != nil, "\(play.outcome)")
        return (try await measure(play.capturePath), play)
    }

    @Test("a 440 Hz tone at --rate 2 lasts half as long (±1%) and stays 440 ± 2 Hz")
    func rateTwo() async throws {
        let (original, _) = try await Self.play("tone440-4s.wav", [])
        let (fast, play) = try await Self.play("tone440-4s.wav", ["--rate", "2"])
        #expect(
            abs(fast.seconds - original.seconds / 2) <= original.seconds / 2 * 0.01,
            "\(fast.seconds) s of \(original.seconds)")
        // sox truncates: the untouched tone reads 439.
        #expect(abs(fast.frequency - 440) <= 2, "\(fast.frequency) Hz")
        #expect(
            abs(fast.frequency - original.frequency) <= 1, "\(fast.frequency) Hz, unchanged \(original.frequency) Hz")
        // What the daemon counted heard is source time: the whole 4 s file.
        #expect(play.debugLines.first?.frames == 192_000, "\(play.debugLines)")
    }

    @Test("--rate 0.5 and 8 stretch and squeeze the tone, its pitch kept", arguments: [0.5, 8])
    func otherRates(rate: Double) async throws {
        let (measure, _) = try await Self.play("tone440-4s.wav", ["--rate", "\(rate)"])
        #expect(abs(measure.seconds - 4 / rate) <= 4 / rate * 0.01, "\(measure.seconds) s")
        // At 8× a 0.5 s capture: a zero crossing more or less is 2 Hz, and libsonic's splices
        // of a period that is not whole frames slip it by 0.6%.
        #expect(abs(measure.frequency - 440) <= (rate <= 2 ? 2 : 6), "\(measure.frequency) Hz")
    }

    @Test("--pitch 12 gives 880 Hz and the same duration")
    func pitchOctave() async throws {
        let (measure, _) = try await Self.play("tone440-4s.wav", ["--pitch", "12"])
        #expect(abs(measure.seconds - 4) <= 0.04, "\(measure.seconds) s")
        #expect(abs(measure.frequency - 880) <= 2, "\(measure.frequency) Hz")
    }

    /// What numpy measures in a capture (Tests/Shell/tone-measure.py): length, and each
    /// channel's frequency.
    struct Spectrum: Decodable {
        var rate: Int
        var channels: Int
        var seconds: Double
        var frequencies: [Double]
    }

    static func spectrum(_ path: String) async throws -> Spectrum {
        let script = Harness.repoRoot.appendingPathComponent("Tests/Shell/tone-measure.py").path
        let outcome = try await Runner.run("/usr/bin/python3", [script, path])
        try #require(outcome.status == 0, "tone-measure.py (python3-numpy): \(outcome)")
        return try JSONDecoder().decode(Spectrum.self, from: Data(outcome.stdout.utf8))
    }

    /// Every rate and channel count, each channel a sine of its own (300, 400, ... Hz, 3 s):
    /// libsonic 0.2.0's own pitch step put stereo an octave off and 6 channels further.
    @Test(
        "--pitch, --rate and both: every channel's frequency and the length, at every rate and channel count",
        arguments: [8000, 22050, 44100, 48000, 96000], [1, 2, 6])
    func everyFormat(rate: Int, channels: Int) async throws {
        for (options, tempo, semitones) in [
            (["--pitch", "12"], 1.0, 12.0), (["--pitch", "-7"], 1, -7), (["--rate", "2"], 2, 0),
            (["--rate", "0.5", "--pitch", "5"], 0.5, 5)
        ] {
            let play = try await Playback.run(
                [try Harness.fixture("reshape/tone-\(rate)-\(channels).wav")], options,
                debug: false, label: "reshape-\(rate)-\(channels)")
            try #require(play.outcome.status == 0 && play.capture != nil, "\(options): \(play.outcome)")
            let heard = try await Self.spectrum(play.capturePath)
            #expect(heard.rate == rate && heard.channels == channels, "\(options): \(heard)")
            #expect(abs(heard.seconds - 3 / tempo) <= 3 / tempo * 0.01, "\(options): \(heard.seconds) s")
            let expected = (0..<channels).map { (300 + 100 * Double($0)) * pow(2, semitones / 12) }
            for (channel, frequency) in heard.frequencies.enumerated() {
                #expect(
                    abs(frequency - expected[channel]) <= expected[channel] * 0.005,
                    "\(options), channel \(channel): \(frequency) Hz, not \(expected[channel])")
            }
        }
    }

    /// 1 s of tone, 2 s of silence, 1 s of tone: the pause is cut to the default silence-gap
    /// (300 ms), so the play is 1.7 s shorter; with --rate 2 as well, half that.
    @Test(
        "a clip with 2 s of silence inside, with --skip-silence, is shorter by about that much",
        arguments: [([String](), 2.3), (["--rate", "2"], 1.15)])
    func skipSilence(extra: [String], expected: Double) async throws {
        let (original, _) = try await Self.play("pause-inside.wav", extra)
        let (skipped, play) = try await Self.play("pause-inside.wav", ["--skip-silence"] + extra)
        #expect(abs(skipped.seconds - expected) <= 0.02, "\(skipped.seconds) s, not \(expected)")
        let saved = (original.seconds - skipped.seconds) * (extra.isEmpty ? 1 : 2)
        #expect(abs(saved - 1.7) <= 0.04, "\(saved) s of the 2 s pause cut")
        #expect(play.debugLines.first?.frames == 192_000, "heard: the whole file, pause included")
    }

    @Test("the config file's silence-gap sets the pause kept")
    func configuredGap() async throws {
        try await withDaemonRuntime { runtime in
            let home = runtime.path + "/config-home"
            try FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
            try (Harness.baseConfig + "silence-gap = 1s\nsilence-level = -40dB\n").write(
                toFile: home + "/announce/config", atomically: true, encoding: .utf8)
            try await runtime.startDaemon(device: nil, environment: ["XDG_CONFIG_HOME": home])
            let capture = try Harness.capturePath("silence-gap")
            let outcome = try await runtime.announce([
                "play", try Harness.fixture("pause-inside.wav"), "--skip-silence",
                "-d", Harness.fileDevice(capture)
            ])
            #expect(outcome.status == 0, "\(outcome)")
            let measure = try await Self.measure(capture)
            #expect(abs(measure.seconds - 3) <= 0.02, "\(measure.seconds) s: 1 s of the pause kept")
        }
    }

    @Test(
        "bad values → 64 with one line naming the option, nothing played",
        arguments: [
            (["--rate", "0"], "--rate 0: out of range 0.25…8"),
            (["--rate=-1"], "--rate -1: out of range 0.25…8"),
            (["--rate", "-2"], "--rate -2: out of range 0.25…8"),
            (["--rate", "nan"], "--rate nan: out of range 0.25…8"),
            (["--rate", "8.5"], "--rate 8.5: out of range 0.25…8"),
            (["--rate", "inf"], "--rate inf: out of range 0.25…8"),
            (["--pitch", "13"], "--pitch 13: out of range -12…12 semitones"),
            (["--pitch", "-12.5"], "--pitch -12.5: out of range -12…12 semitones"),
            (["--pitch", "nan"], "--pitch nan: out of range -12…12 semitones")
        ])
    func badValues(options: [String], message: String) async throws {
        let play = try await Playback.run(
            [try Harness.fixture("tone440-4s.wav")], options, debug: false, label: "bad-reshape")
        #expect(play.outcome.status == 64, "\(play.outcome)")
        #expect(play.outcome.stderrLines.count == 1, "\(play.outcome.stderr)")
        #expect(play.outcome.stderr.hasPrefix("announce: \(message)"), "\(play.outcome.stderr)")
        #expect(play.capturedNothing, "something was played")
    }
}
