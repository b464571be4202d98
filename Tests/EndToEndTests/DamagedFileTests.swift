import Foundation
import Testing

/// Damaged FLAC, MP3 and cut PCM files play everything ffmpeg (FLAC, PCM) or mpg123 (MP3) decodes of them,
/// sample for sample, exit 0 and say what was wrong in one warning; `info` reports the same
/// length and damage. A file of which nothing decodes is refused with 65.
@Suite("Damaged files play what decodes")
struct DamagedFileTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        /// The warning's text after "FILE: "; nil when the file plays without one.
        var warning: String?
        /// ffmpeg's Vorbis decoder is its own, not libvorbis: within float rounding.
        var tolerance = Tolerance.exact
        var testDescription: String { file }
    }

    static let cases: [Case] = [
        Case(file: "lost-sync.flac", warning: "damaged data skipped"),
        Case(file: "junk-before-frames.flac", warning: "damaged data skipped"),
        Case(file: "zero-total.flac", warning: nil),  // 0: the total is unknown, not zero
        Case(file: "small-total.flac", warning: nil),  // every frame present plays
        Case(file: "beyond-total.flac", warning: "truncated: 1.0 of 261.0 s"),
        Case(file: "cut.flac", warning: "truncated: 0.3 of 1.0 s"),
        Case(file: "big-metadata.flac", warning: nil),
        Case(file: "cut.wav", warning: "truncated: 0.6 of 1.0 s"),
        Case(file: "cut.aiff", warning: "truncated: 0.3 of 0.6 s"),
        Case(file: "cut.caf", warning: "truncated: 0.3 of 0.6 s"),  // libsndfile alone refuses it
        Case(file: "damaged-head.mp3", warning: "damaged data skipped"),
        Case(file: "junk-before.mp3", warning: "damaged data skipped"),
        // Ogg cut in a transfer: libsndfile gives no length; counted by decoding.
        Case(file: "cut.opus", warning: "truncated: 7.0 s"),
        Case(file: "cut.ogg", warning: "truncated: 6.1 s", tolerance: 1e-6)
    ]

    @Test("plays the reference decode of what is there, with one warning", arguments: cases)
    func plays(_ test: Case) async throws {
        let path = try Harness.fixture("damaged/\(test.file)")
        let isFloat = [".mp3", ".ogg", ".opus"].contains { test.file.hasSuffix($0) }
        let reference = try PCM.reference(path + (isFloat ? ".ref.f32" : ".ref.s16"), channels: 2)
            .quantised(to: isFloat ? .int32 : .int16)
        try #require(reference.frames > 5_000, "the reference decode is too short")

        let play = try await Playback.run([path], label: "damaged")
        if let output = play.output() {
            expectSamples(output, match: reference, tolerance: test.tolerance, "\(test.file) vs its reference decode")
            #expect(play.debugLines.first?.frames == reference.frames)
        }
        let warnings = play.otherStderrLines
        if let warning = test.warning {
            #expect(warnings.count == 1 && warnings[0].hasSuffix("\(path): \(warning)"), "\(warnings)")
        } else {
            #expect(warnings.isEmpty)
        }

        let info = try await Runner.announce(["info", "--json", path])
        try #require(info.status == 0, "\(info)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == reference.frames, "info's frames vs the reference decode")
        #expect(object["damage"] as? String == test.warning)
        #expect(object["truncated"] as? Bool == (test.warning?.hasPrefix("truncated") ?? false))
        // cbr128.mp3 damaged: ffmpeg made it at a constant 128 kbit/s.
        if isFloat && test.file.hasSuffix(".mp3") {
            #expect(object["codec"] as? String == "MPEG-1 Layer III 128 kbit/s CBR")
        }
    }

    @Test("a FLAC of which nothing decodes: 65 with the reason, nothing played")
    func nothingDecodes() async throws {
        let path = try Harness.fixture("damaged/block-past-end.flac")
        let play = try await Playback.run([path], debug: false, label: "nothing")
        BadInputTests.expectOneError(play.outcome, status: 65, naming: "\(path): no FLAC audio frame decodes")
        #expect(play.capturedNothing)
    }

    @Test("an Ogg Vorbis cut inside its first audio page: 65 with the reason, nothing played")
    func oggCutBeforeAudio() async throws {
        let path = try Harness.fixture("damaged/cut-before-audio.ogg")
        let play = try await Playback.run([path], debug: false, label: "nothing")
        BadInputTests.expectOneError(play.outcome, status: 65, naming: "\(path): cut before its first audio page")
        #expect(play.capturedNothing)
        let info = try await Runner.announce(["info", path])
        #expect(info.status == 65, "\(info)")
    }

    /// The header's length let `--start` pass, the audio ends before it: nothing is heard, so it is
    /// no success, but the 64 `play` gives a --start past a known end.
    @Test(
        "--start past where a cut file's audio ends: 64, one line with where it ends, nothing played",
        arguments: [
            ("cut.flac", "0.6s", "0:00.6", "truncated: 0.3 of 1.0 s"),
            ("cut.opus", "8s", "0:08.0", "the file is cut short before it")
        ])
    func startPastTheCut(_ file: String, _ start: String, _ said: String, _ end: String) async throws {
        let path = try Harness.fixture("damaged/\(file)")
        let play = try await Playback.run([path], ["--start", start], debug: false, label: "start-past-cut")
        #expect(play.outcome.status == 64, "\(play.outcome)")
        #expect(
            play.outcome.stderrLines == ["announce: \(path): --start \(said) is at or past the end (\(end))"],
            "\(play.outcome)")
        #expect(play.capturedNothing)
    }

    @Test("a WAV whose data chunk is longer than the file warns 'truncated' and info says so")
    func truncatedWAV() async throws {
        let path = try Harness.fixture("bad/huge-data-size.wav")
        let play = try await Playback.run([path], debug: false, label: "truncated-wav")
        #expect(play.outcome.status == 0)
        #expect(
            play.outcome.stderrLines.count == 1
                && play.outcome.stderrLines[0].hasSuffix("\(path): truncated: 0.5 of 12173.9 s"), "\(play.outcome)")
        let info = try await Runner.announce(["info", path])
        #expect(info.stdout.contains("damage     truncated: 0.5 of 12173.9 s"), "\(info)")
    }
}
