import Foundation
import Testing

/// --volume, --gain, --pan, --loops, --start: the output is the reference decode transformed.
@Suite("Playback options")
struct OptionTests {
    /// Plays `clip` with `options`; the captured output, or nil after recording why not.
    private func play(_ clip: Clip, _ options: [String], sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> (Playback, PCM?)
    {
        let play = try await Playback.run(
            [try Harness.fixture(clip.file)], options,
            label: clip.file + options.joined())
        return (play, play.output(sourceLocation: sourceLocation))
    }

    /// Tolerance for `sample × gain`: ±1 LSB for integers (the product rounds), and float32
    /// rounding of the product (< 2^-23 for samples within ±1) for float sources.
    private func gainTolerance(_ clip: Clip) -> Double {
        clip.sourceFormat == .float32 ? 2e-7 : Tolerance.oneLSB(clip.format)
    }

    struct GainCase: Sendable, CustomTestStringConvertible {
        var clip: String
        var options: [String]
        var gain: Double
        var testDescription: String { "\(clip) \(options.joined(separator: " "))" }
    }

    static let gainCases: [GainCase] = [
        GainCase(clip: "wav16-stereo.wav", options: ["--volume", "0.5"], gain: 0.5),
        GainCase(clip: "wav16-stereo.wav", options: ["--gain=-6"], gain: pow(10, -6.0 / 20)),
        GainCase(clip: "wav16-stereo.wav", options: ["--volume", "0"], gain: 0),
        // +12 dB takes the half-scale tones past full scale: int16 clips at -32768 and 32767.
        GainCase(clip: "wav16-stereo.wav", options: ["--gain", "12"], gain: pow(10, 12.0 / 20)),
        GainCase(clip: "wav24.wav", options: ["--volume", "0.5"], gain: 0.5),
        GainCase(clip: "wavfloat.wav", options: ["--gain=-6"], gain: pow(10, -6.0 / 20)),
        GainCase(clip: "cbr128.mp3", options: ["--volume", "0.25"], gain: 0.25)
    ]

    @Test("--volume and --gain scale every sample", arguments: gainCases)
    func gain(_ test: GainCase) async throws {
        let clip = Clips.named(test.clip)
        let (play, output) = try await play(clip, test.options)
        guard let output else { return }
        #expect(play.debugLines.first?.format == clip.format, "gain must not change the device format")
        var expected = try Clips.load(clip).scaled(Array(repeating: test.gain, count: clip.channels))
        if clip.format != .float32 {
            let top = (clip.format.scale - 1) / clip.format.scale
            expected.samples = expected.samples.map { min(max($0, -1), top) }
        }
        expectSamples(
            output, match: expected, tolerance: gainTolerance(clip),
            "\(test.testDescription): reference × \(test.gain), clipped to full scale")
    }

    struct PanCase: Sendable, CustomTestStringConvertible {
        var clip: String
        var pan: String
        /// Left and right gains: pan > 0 attenuates left by (1 - pan), pan < 0 right by (1 + pan).
        var gains: [Double]
        var testDescription: String { "\(clip) --pan \(pan)" }
    }

    static let panCases: [PanCase] = [
        PanCase(clip: "wav16-stereo.wav", pan: "1", gains: [0, 1]),
        PanCase(clip: "wav16-stereo.wav", pan: "-0.5", gains: [1, 0.5]),
        PanCase(clip: "wav16-stereo.wav", pan: "0.25", gains: [0.75, 1]),
        PanCase(clip: "wav16-mono.wav", pan: "1", gains: [0, 1]),
        PanCase(clip: "wav16-mono.wav", pan: "-1", gains: [1, 0]),
        PanCase(clip: "mono.mp3", pan: "0.5", gains: [0.5, 1])
    ]

    @Test("--pan is a stereo balance; a mono clip with a pan plays in stereo", arguments: panCases)
    func pan(_ test: PanCase) async throws {
        let clip = Clips.named(test.clip)
        // `--pan=X`: a negative value must also work as `--pan X` (see negativeValuesAfterASpace).
        let (play, output) = try await play(clip, ["--pan=\(test.pan)"])
        guard let output else { return }
        #expect(play.debugLines.first?.channels == 2, "a panned clip plays in stereo")
        var reference = try Clips.load(clip)
        if reference.channels == 1 { reference = reference.monoToStereo() }
        expectSamples(
            output, match: reference.scaled(test.gains), tolerance: gainTolerance(clip),
            "\(test.testDescription): reference × \(test.gains)")
        for (channel, gain) in test.gains.enumerated() where gain == 0 {
            #expect(output.channel(channel).allSatisfy { $0 == 0 }, "channel \(channel) must be silent")
        }
    }

    @Test("negative values may follow their option after a space: --gain -6, --pan -0.5")
    func negativeValuesAfterASpace() async throws {
        let clip = Clips.named("wav16-stereo.wav")
        for (spaced, joined) in [(["--gain", "-6"], ["--gain=-6"]), (["--pan", "-0.5"], ["--pan=-0.5"])] {
            let (spacedPlay, spacedOutput) = try await play(clip, spaced)
            let (_, joinedOutput) = try await play(clip, joined)
            #expect(spacedPlay.outcome.status == 0, "\(spaced.joined(separator: " ")): \(spacedPlay.outcome)")
            if let spacedOutput, let joinedOutput {
                expectSamples(
                    spacedOutput, match: joinedOutput, tolerance: Tolerance.exact,
                    "\(spaced.joined(separator: " ")) vs \(joined[0])")
            }
        }
    }

    @Test("--loops 2 plays exactly three copies")
    func loops() async throws {
        for name in ["wav16-stereo.wav", "vbr.mp3"] {
            let clip = Clips.named(name)
            let (play, output) = try await play(clip, ["--loops", "2"])
            guard let output else { continue }
            let reference = try Clips.load(clip)
            #expect(play.debugLines.first?.frames == 3 * reference.frames)
            expectSamples(
                output, match: reference + reference + reference, tolerance: Tolerance.exact,
                "\(name) --loops 2")
        }
    }

    struct StartCase: Sendable, CustomTestStringConvertible {
        var clip: String
        var start: String
        var seconds: Double
        var loops = 0
        /// Beyond the clip's reference tolerance: a decoder that seeks may not reproduce the
        /// float rounding of a decode from the start (libmpg123: seen 6e-8 on MPEG-2 mono).
        var tolerance: Double?
        var testDescription: String { "\(clip) --start \(start)" + (loops > 0 ? " --loops \(loops)" : "") }
    }

    static let startCases: [StartCase] = [
        StartCase(clip: "wav16-stereo.wav", start: "0.5s", seconds: 0.5),
        StartCase(clip: "wav16-stereo.wav", start: "500ms", seconds: 0.5),
        StartCase(clip: "wav16-stereo.wav", start: "0.5", seconds: 0.5),
        StartCase(clip: "wav16-stereo.wav", start: "0.5s", seconds: 0.5, loops: 1),
        StartCase(clip: "flac24.flac", start: "0.5s", seconds: 0.5),
        StartCase(clip: "clip.caf", start: "0.2s", seconds: 0.2, loops: 1),
        StartCase(clip: "vorbis.ogg", start: "0.5s", seconds: 0.5),
        StartCase(clip: "opus.opus", start: "0.5s", seconds: 0.5),
        StartCase(clip: "cbr128.mp3", start: "0.5s", seconds: 0.5, loops: 1, tolerance: 1e-6),
        StartCase(clip: "mono.mp3", start: "1s", seconds: 1, tolerance: 1e-6),
        StartCase(clip: "vbr.mp3", start: "0.5s", seconds: 0.5, tolerance: 1e-6),
        StartCase(clip: "vbr.mp3", start: "0.25s", seconds: 0.25, tolerance: 1e-6)
    ]

    @Test("--start skips to frame round(seconds × rate); later loops start at 0", arguments: startCases)
    func start(_ test: StartCase) async throws {
        let clip = Clips.named(test.clip)
        var options = ["--start", test.start]
        if test.loops > 0 { options += ["--loops", String(test.loops)] }
        let (play, output) = try await play(clip, options)
        guard let output else { return }
        let startFrame = Int((test.seconds * Double(clip.sampleRate)).rounded())
        for reference in clip.references {
            let decoded = try Clips.load(clip, reference)
            var expected = decoded.frames(from: startFrame)
            for _ in 0..<test.loops { expected = expected + decoded }
            if reference.coversWholeClip {
                #expect(play.debugLines.first?.frames == expected.frames)
            } else if test.loops > 0 {
                continue  // a prefix-only reference cannot line up the later passes
            }
            expectSamples(
                output, match: expected, tolerance: max(reference.tolerance, test.tolerance ?? 0),
                outputMayContinue: !reference.coversWholeClip,
                "\(test.testDescription) vs \(reference.file) from frame \(startFrame)")
        }
    }
}
