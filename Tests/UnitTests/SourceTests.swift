import Foundation
import Testing

@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// The engine plays any `Source`: these drive it with sources that are not files (known tone,
/// unknown length, no seeking), as speech renders and streams will be, and check a file's
/// source says what its decoder found.
@Suite(.timeLimit(.minutes(1))) struct SourceTests {
    /// `frames` of a `hertz` sine at 48 kHz, mono int16, at half scale.
    private func tone(hertz: Double, frames: Int) -> [Int16] {
        (0..<frames).map { Int16((sin(2 * Double.pi * hertz * Double($0) / 48_000) * 16_384).rounded()) }
    }

    @Test func aToneFromMemoryPlaysSampleExactAndReportsEveryFrame() throws {
        let samples = tone(hertz: 1_000, frames: 4_800)
        let (engine, outputs) = makeEngine()
        var last: PlaybackProgress?
        let report = try engine.play(MemorySource(samples: samples, channels: 1)) { last = $0 }
        #expect(outputs()[0].format == OutputFormat(sampleFormat: .int16, sampleRate: 48_000, channels: 1))
        #expect(outputs()[0].int16Samples == samples)
        #expect(report.framesPlayed == 4_800)
        #expect(last?.framesPlayed == 4_800)
        #expect(last?.totalFrames == 4_800 && last?.totalIsFinal == true)
        #expect(report.truncationWarning == nil)
    }

    @Test func anUnknownLengthIsNoneUntilTheInputEndsThenExact() throws {
        let samples = tone(hertz: 440, frames: 30_000)
        let source = MemorySource(samples: samples, channels: 1, lengthKnown: false)
        #expect(source.duration == .unknown && source.duration.frames == nil)
        let (engine, outputs) = makeEngine()
        var reports: [PlaybackProgress] = []
        let report = try engine.play(source) { reports.append($0) }
        #expect(outputs()[0].int16Samples == samples)
        #expect(report.framesPlayed == 30_000)
        // No guessed total while it plays; the exact one once every frame has been read.
        #expect(reports.filter { !$0.totalIsFinal }.allSatisfy { $0.totalFrames == nil })
        #expect(reports.last?.totalIsFinal == true && reports.last?.totalFrames == 30_000)
        #expect(reports.last?.framesPlayed == 30_000)
    }

    @Test func aSourceThatCannotSeekRefusesStartAndLoopsBeforeTheDeviceOpens() throws {
        let source = MemorySource(samples: tone(hertz: 440, frames: 4_800), channels: 1, canSeek: false)
        let (engine, outputs) = makeEngine()
        #expect(
            throws: AnnounceError.usage(
                "memory.wav: --start needs a source that can seek; this one plays from its beginning")
        ) {
            try engine.play(source, options: PlaybackOptions(start: TimeSpan(seconds: 0.05)))
        }
        #expect(throws: AnnounceError.usage("memory.wav: --loops needs a source that can seek; this one plays once")) {
            try engine.play(source, options: PlaybackOptions(loops: 1))
        }
        #expect(outputs().isEmpty, "refused before the device was opened")
        #expect(source.asked.isEmpty, "nothing was read")
        // From its beginning, once, it plays whole (the fake traps any seek).
        let report = try engine.play(source)
        #expect(report.framesPlayed == 4_800)
        #expect(outputs()[0].int16Samples == source.samples)
    }

    @Test func startIsCheckedAgainstTheSourceOnce() throws {
        let source = MemorySource(samples: ramp(frames: 24_000, channels: 1), channels: 1)
        #expect(try source.startFrame(nil) == 0)
        #expect(try source.startFrame(TimeSpan(seconds: 0.005)) == 240)
        #expect(throws: AnnounceError.usage("memory.wav: --start 0:00.5 is at or past the end (0:00.5)")) {
            try source.startFrame(TimeSpan(seconds: 0.5))
        }
        // An unknown length cannot refuse a start; the play then ends at once if it is past the end.
        let unknown = MemorySource(samples: ramp(frames: 480, channels: 1), channels: 1, lengthKnown: false)
        #expect(try unknown.startFrame(TimeSpan(seconds: 1)) == 48_000)
    }

    @Test func aStartResumesAtThatExactFrame() throws {
        // Resuming is a start at the frame heard: every frame from it, none before, none twice.
        let samples = ramp(frames: 9_600, channels: 2)
        let (engine, outputs) = makeEngine()
        let report = try engine.play(
            MemorySource(samples: samples, channels: 2),
            options: PlaybackOptions(start: TimeSpan(seconds: 3_333.0 / 48_000)))
        #expect(outputs()[0].int16Samples == Array(samples[(3_333 * 2)...]))
        #expect(report.framesPlayed == Int64(9_600 - 3_333))
    }

    @Test func aFileSourceSaysWhatItsDecoderFound() throws {
        let clip = try InProcessDaemonTests.writeClip(frames: 4_800)
        defer { unlink(clip.path) }
        let source = try FileSource(path: clip.path)
        #expect(source.name == clip.path)
        #expect(
            source.format
                == SourceFormat(
                    sampleRate: 48_000, channels: 2, exactSampleFormat: .int16,
                    container: .wav, codec: .pcm(bits: 16)))
        #expect(source.duration == .exact(4_800) && source.settledDuration() == .exact(4_800))
        #expect(source.canSeek && source.resumption == .exactFrame)
        let (engine, outputs) = makeEngine()
        let report = try engine.play(source, options: PlaybackOptions(start: TimeSpan(seconds: 0.02)))  // frame 960
        #expect(outputs()[0].int16Samples == Array(clip.samples[(960 * 2)...]))
        #expect(report.framesPlayed == 4_800 - 960)
    }

    @Test func aFileThatIsNotThereFailsToOpenAsBefore() {
        #expect(throws: AnnounceError.cannotOpen(path: "/nonexistent/a.wav", reason: "no such file")) {
            try FileSource(path: "/nonexistent/a.wav")
        }
    }

    /// `info` and the finished event print these words; only a truncation sets info's `truncated`.
    @Test func damageIsTypedAndWordedAsBefore() {
        let cases: [(Damage, String)] = [
            (.truncated(played: 39_690, promised: 11_510_100, sampleRate: 44_100), "truncated: 0.9 of 261.0 s"),
            (.truncated(played: 617_400, promised: nil, sampleRate: 44_100), "truncated: 14.0 s"),
            (.skipped, "damaged data skipped"),
            (.moreStreams, "more than one Ogg stream (chained or multiplexed): only the first plays"),
            (.formatChange, "format changes mid-stream; stopped at the change"),
            (.stopped("decoding stopped early: bad frame"), "decoding stopped early: bad frame")
        ]
        for (damage, words) in cases { #expect(damage.description == words) }
        #expect(cases.map(\.0.isTruncation) == [true, true, false, false, false, false])
    }
}
