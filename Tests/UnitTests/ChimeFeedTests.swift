import Foundation
import Testing

@testable import AnnounceEngine
@testable import AnnounceModel

/// Chimes and the wake-up silence in the engine: written in the play's stream around the clip,
/// in none of its positions (framesPlayed, progress), and again on every play (a resume).
@Suite struct ChimeFeedTests {
    static func floats(_ samples: [Int16]) -> [Float] { samples.map { Float($0) / 32_768 } }

    @Test func theChimeAndTheClosingToneFrameTheClipAndCountInNoPosition() throws {
        let clip = ramp(frames: 4_000, channels: 2)
        let before = [Float](repeating: 0.25, count: 300 * 2)
        let after = [Float](repeating: -0.5, count: 200 * 2)
        let (engine, outputs) = makeEngine(formats: [.float32])
        var last: PlaybackProgress?
        let report = try engine.play(
            MemorySource(samples: clip, channels: 2), options: PlaybackOptions(loops: 1),
            chimes: Chimes(before: before, after: after)
        ) { last = $0 }
        #expect(
            outputs()[0].floatSamples == before + Self.floats(clip) + Self.floats(clip) + after,
            "once before, once after, both passes between")
        #expect(report.framesPlayed == 8_000, "the program's frames only")
        #expect(last?.totalFrames == 8_000 && last?.framesPlayed == 8_000)
    }

    @Test func aResumedPlayChimesAgainThenGoesOnWhereItWas() throws {
        let clip = ramp(frames: 4_000, channels: 1)
        let before = [Float](repeating: 0.25, count: 100)
        let (engine, outputs) = makeEngine(formats: [.float32])
        let report = try engine.play(
            MemorySource(samples: clip, channels: 1),
            options: PlaybackOptions(start: TimeSpan(seconds: 1_000.0 / 48_000)), chimes: Chimes(before: before))
        #expect(outputs()[0].floatSamples == before + Self.floats(Array(clip[1_000...])))
        #expect(report.framesPlayed == 3_000)
    }

    @Test func theWakeUpSilenceGoesBeforeAPlayThatOpensTheDeviceOnly() throws {
        let clip = ramp(frames: 2_000, channels: 2)
        let (engine, outputs) = makeEngine()
        var options = PlaybackOptions()
        options.wakeUp = TimeSpan(seconds: 0.01)
        var started: [Int64] = []
        let report = try engine.play(MemorySource(samples: clip, channels: 2), options: options) { progress in
            if progress.started && started.isEmpty { started.append(progress.framesPlayed) }
        }
        #expect(outputs()[0].int16Samples == [Int16](repeating: 0, count: 480 * 2) + clip)
        #expect(report.framesPlayed == 2_000, "the silence is no part of the clip")
        #expect(started.first.map { $0 > 0 } == true, "started once the clip's own frames were heard: \(started)")
    }

    @Test func aResumedPlayThatOpensTheDeviceFadesInAfterTheWakeUpSilenceNotOverIt() throws {
        let clip = [Int16](repeating: 16_384, count: 2_000)  // a constant half scale, mono
        let (engine, outputs) = makeEngine(formats: [.float32])
        var options = PlaybackOptions(fadeIn: TimeSpan(seconds: 0.005))  // 240 frames
        options.wakeUp = TimeSpan(seconds: 0.01)  // 480 frames
        _ = try engine.play(MemorySource(samples: clip, channels: 1), options: options)
        let played = outputs()[0].floatSamples
        #expect(played.count == 480 + 2_000)
        #expect(played[..<480].allSatisfy { $0 == 0 }, "the wake-up silence")
        #expect(played[480] < 0.01, "the clip's first frame starts the fade: \(played[480])")
        #expect(played[480 + 120] > 0.1 && played[480 + 120] < 0.4, "half way up: \(played[480 + 120])")
        #expect(played[(480 + 240)...].allSatisfy { $0 == 0.5 }, "at its own level once the fade is over")
    }
}
