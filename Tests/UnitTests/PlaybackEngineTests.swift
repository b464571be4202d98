import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

// A lost wake-up would hang, not fail: the time limit turns it into a failure.
@Suite(.timeLimit(.minutes(1))) struct PlaybackEngineTests {
    @Test func unityGainInt16IsBitExactAcrossRingWraps() throws {
        // 100 000 frames through a ring of max(4 × 64 × 2, 48000 / 4) frames wraps several times.
        let source = ramp(frames: 100_000, channels: 2)
        let (engine, outputs) = makeEngine()
        let report = try engine.play(MemorySource(samples: source, channels: 2))
        #expect(outputs().count == 1)
        #expect(outputs()[0].format.sampleFormat == .int16)
        #expect(outputs()[0].int16Samples == source)
        #expect(report.framesPlayed == 100_000)
        #expect(outputs()[0].drainCount == 1)
    }

    @Test func floatOnlyDecoderConvertsToAnInt16Device() throws {
        let source = ramp(frames: 5_000, channels: 1)
        let (engine, outputs) = makeEngine(formats: [.int16])
        _ = try engine.play(MemorySource(samples: source, channels: 1, floatOnly: true))
        #expect(outputs()[0].int16Samples == source)
    }

    @Test func volumeScalesEverySample() throws {
        let source = ramp(frames: 3_000, channels: 2)
        let (engine, outputs) = makeEngine()
        _ = try engine.play(MemorySource(samples: source, channels: 2), options: PlaybackOptions(gain: 0.5))
        let expected = source.map { Int16((Float($0) / 32_768 * 0.5 * 32_768).rounded()) }
        #expect(outputs()[0].int16Samples == expected)
    }

    @Test func panOnMonoPlaysStereoWithBalance() throws {
        let source = ramp(frames: 2_000, channels: 1)
        let (engine, outputs) = makeEngine()
        _ = try engine.play(MemorySource(samples: source, channels: 1), options: PlaybackOptions(pan: -0.5))
        let output = outputs()[0]
        #expect(output.format.channels == 2)
        let left = stride(from: 0, to: output.int16Samples.count, by: 2).map { output.int16Samples[$0] }
        let right = stride(from: 1, to: output.int16Samples.count, by: 2).map { output.int16Samples[$0] }
        #expect(left == source)
        #expect(right == source.map { Int16((Float($0) * 0.5).rounded()) })
    }

    @Test func loopsAndStartOffset() throws {
        let frames = 1_000
        let source = ramp(frames: frames, channels: 2)
        let (engine, outputs) = makeEngine()
        let options = PlaybackOptions(loops: 2, start: TimeSpan(seconds: 0.01))  // 480 frames at 48 kHz
        let report = try engine.play(MemorySource(samples: source, channels: 2), options: options)
        let expected = Array(source[(480 * 2)...]) + source + source
        #expect(outputs()[0].int16Samples == expected)
        #expect(report.framesPlayed == Int64(frames - 480 + 2 * frames))
    }

    @Test func startAtOrPastTheEndIsAUsageError() {
        let (engine, _) = makeEngine()
        let source = MemorySource(samples: ramp(frames: 480, channels: 1), channels: 1)
        #expect(throws: AnnounceError.self) {
            try engine.play(source, options: PlaybackOptions(start: TimeSpan(seconds: 0.01)))
        }
    }

    @Test func consecutiveClipsShareTheDeviceWhenTheFormatMatches() throws {
        let first = ramp(frames: 700, channels: 2)
        let second = ramp(frames: 900, channels: 2).reversed()
        let (engine, outputs) = makeEngine()
        _ = try engine.play(MemorySource(samples: first, channels: 2))
        _ = try engine.play(MemorySource(samples: Array(second), channels: 2))
        #expect(outputs().count == 1)
        #expect(outputs()[0].int16Samples == first + second)
        _ = try engine.play(MemorySource(samples: first, channels: 2, rate: 44_100))
        #expect(outputs().count == 2, "a new rate reopens the device")
    }

    @Test func stopMidClipEndsEarlyAndTheEngineStaysUsable() throws {
        let source = ramp(frames: 48_000, channels: 2)
        let control = PlaybackControl()
        let (engine, outputs) = makeEngine { output in
            output.beforeWrite = { written in if written >= 6_400 { control.stop() } }
        }
        let report = try engine.play(MemorySource(samples: source, channels: 2), control: control)
        #expect(report.stopped)
        // Stopped from inside the write that follows the first 6 400 frames: those played, not the rest.
        #expect((6_400..<48_000).contains(report.framesPlayed), "\(report.framesPlayed) frames played")
        #expect(outputs()[0].int16Samples == Array(source.prefix(Int(report.framesPlayed) * 2)))
        #expect(outputs()[0].drainCount == 0, "a stop drops, it does not drain")
        let again = try engine.play(MemorySource(samples: ramp(frames: 100, channels: 2), channels: 2))
        #expect(!again.stopped && again.framesPlayed == 100)
    }

    /// A stop that comes while the device drains the clip's end (a cancel or a preemption
    /// racing the end) finds it heard to the end: played, not stopped.
    @Test func aStopAsTheClipEndsLeavesItPlayed() throws {
        let control = PlaybackControl()
        let (engine, outputs) = makeEngine { output in output.onDrain = { control.stop() } }
        let report = try engine.play(
            MemorySource(samples: ramp(frames: 4_800, channels: 2), channels: 2), control: control)
        #expect(!report.stopped, "stopped after it was heard to its end")
        #expect(report.framesPlayed == 4_800)
        #expect(outputs()[0].drainCount == 1)
    }

    @Test func decodeFailureIsReportedAndTheEngineStaysUsable() throws {
        let (engine, _) = makeEngine()
        let broken = MemorySource(samples: ramp(frames: 100, channels: 2), channels: 2)
        broken.failFirstRead = true
        #expect(throws: AnnounceError.undecodable(path: "memory.wav", reason: "broken on purpose")) {
            try engine.play(broken)
        }
        let report = try engine.play(MemorySource(samples: ramp(frames: 100, channels: 2), channels: 2))
        #expect(report.framesPlayed == 100)
    }

    @Test func underrunsAreCountedPerClipNotPerDevice() throws {
        let (engine, outputs) = makeEngine { output in
            output.beforeWrite = { [unowned output] written in if written == 0 { output.recoveries += 2 } }
        }
        let first = try engine.play(MemorySource(samples: ramp(frames: 500, channels: 2), channels: 2))
        outputs()[0].beforeWrite = nil
        let second = try engine.play(MemorySource(samples: ramp(frames: 500, channels: 2), channels: 2))
        #expect(outputs().count == 1, "both clips share the device")
        #expect(first.recoveries == 2)
        #expect(second.recoveries == 0)
    }

    /// A decode error mid-clip returns only once the playback thread is done with the play:
    /// its slot is not handed to the next play while the thread still plays it.
    @Test func aDecodeErrorMidClipReturnsOnlyOnceThePlayIsDone() throws {
        let (engine, outputs) = makeEngine()
        let broken = MemorySource(samples: ramp(frames: 48_000, channels: 2), channels: 2)
        broken.failAtRead = 2
        #expect(throws: AnnounceError.undecodable(path: "memory.wav", reason: "broken on purpose")) {
            try engine.play(broken)
        }
        #expect(engine.activePlays == 0)
        let next = ramp(frames: 3_000, channels: 2)
        let report = try engine.play(MemorySource(samples: next, channels: 2))
        #expect(report.framesPlayed == 3_000)
        #expect(outputs().count == 1 && Array(outputs()[0].int16Samples.suffix(6_000)) == next)
    }

    @Test func seekFailureWhileLoopingEndsThePlayAndTheEngineStaysUsable() throws {
        let (engine, _) = makeEngine()
        let source = MemorySource(samples: ramp(frames: 300, channels: 2), channels: 2)
        source.failSeeks = true
        #expect(throws: AnnounceError.undecodable(path: "memory.wav", reason: "cannot seek")) {
            try engine.play(source, options: PlaybackOptions(loops: 3))
        }
        let report = try engine.play(MemorySource(samples: ramp(frames: 100, channels: 2), channels: 2))
        #expect(report.framesPlayed == 100)
    }

    @Test func deviceFailureMidClipIsReportedWithThePositionAndTheNextPlayReopens() throws {
        let (engine, outputs) = makeEngine { $0.failAfterFrames = $0.periodFrames * 3 }
        let failed = try engine.play(MemorySource(samples: ramp(frames: 5_000, channels: 2), channels: 2))
        #expect(failed.deviceFailure?.code == 19 && failed.deviceFailure?.isDeviceLoss == true)
        #expect(failed.framesPlayed == Int64(outputs()[0].periodFrames * 3), "what was written before the failure")
        let again = try engine.play(MemorySource(samples: ramp(frames: 10, channels: 2), channels: 2))
        #expect(!again.stopped && again.framesPlayed == 10, "the next play, on a reopened device")
        #expect(outputs().count == 2)
        #expect(outputs()[1].int16Samples == ramp(frames: 10, channels: 2))
    }

    @Test func progressComesFromPlayedFramesAtMostInRealTimeAndEndsAtTheTotal() throws {
        // A paced fake device: each 64-frame write takes its 1.33 ms.
        let tick = 4_800  // 100 ms at 48 kHz
        let (engine, _) = makeEngine { output in output.beforeWrite = { _ in usleep(1_333) } }
        var seen: [PlaybackProgress] = []
        _ = try engine.play(MemorySource(samples: ramp(frames: 24_000, channels: 1), channels: 1)) { seen.append($0) }
        let frames = seen.map(\.framesPlayed)
        // The first write ticks at once ("started"); then about every 100 ms of audio and of time:
        // a start, four ticks and the end, give or take one for timing (the frames a report reads
        // depend on when the decode side gets to it, so their spacing is not asserted).
        #expect(frames.first.map { $0 > 0 && $0 <= tick } == true, "\(frames)")
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0 < $1 }, "\(frames)")
        #expect((3...7).contains(frames.count), "\(frames)")
        #expect(frames.last == 24_000)
        #expect(seen.allSatisfy { $0.totalFrames == 24_000 && $0.sampleRate == 48_000 })
    }

    /// The daemon reports unwatched plays once a second and switches to the full rate when a
    /// client starts showing progress: the switch ticks at once and the rate holds from there.
    @Test func theControlSetsTheProgressCadenceAlsoMidPlay() throws {
        let control = PlaybackControl()
        control.progressInterval = 1
        let switchAt = 12_032  // 250 ms in, a multiple of the fake's 64-frame writes
        let (engine, _) = makeEngine { output in
            output.beforeWrite = { written in
                if written == switchAt { control.progressInterval = nil }
                usleep(1_333)  // paced: 64 frames at 48 kHz
            }
        }
        var frames: [Int64] = []
        _ = try engine.play(MemorySource(samples: ramp(frames: 24_000, channels: 1), channels: 1), control: control) {
            frames.append($0.framesPlayed)
        }
        let before = frames.filter { $0 < Int64(switchAt) }
        let after = frames.filter { $0 >= Int64(switchAt) }
        #expect(before.count == 1, "at one a second, only the start in the first 250 ms: \(frames)")
        // The switch, then every 100 ms of the remaining 250 ms, and the end (one either way for timing).
        #expect((3...5).contains(after.count), "\(frames)")
        #expect(frames.last == 24_000)
    }

    @Test func anUnpacedDeviceGetsNoFloodOfProgress() throws {
        var seen = 0
        let (engine, _) = makeEngine()
        _ = try engine.play(MemorySource(samples: ramp(frames: 480_000, channels: 1), channels: 1)) { _ in seen += 1 }
        #expect(seen < 20, "10 s of audio played in far less time: \(seen) progress reports, not 100")
    }
}
