import Foundation
import Synchronization
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// Several plays at once on one engine: the playback thread mixes them. The capturing
/// device blocks its write at a chosen frame until the test has started the next step,
/// so what overlaps what is decided by the test, not by thread timing. The device takes 64
/// frames per write and the gate holds the write that starts at its frame, so whatever the
/// test does at a gate takes effect 64 frames later.
@Suite(.timeLimit(.minutes(1))) struct MixingEngineTests {
    /// A sine in [-amplitude, amplitude], exactly representable in int16.
    static func tone(_ frequency: Double, frames: Int, amplitude: Double = 0.25, rate: Double = 48_000) -> [Float] {
        (0..<frames).map {
            Float((amplitude * sin(2 * .pi * frequency * Double($0) / rate) * 32_768).rounded() / 32_768)
        }
    }

    /// Runs `body` on its own thread; `wait()` returns its result.
    final class Background<T: Sendable>: @unchecked Sendable {
        private let done = CountingSemaphore()
        private var result: Result<T, any Error>?
        init(_ body: @escaping @Sendable () throws -> T) {
            let thread = Thread { [self] in
                result = Result { try body() }
                done.signal()
            }
            thread.start()
        }
        func wait() throws -> T {
            done.wait()
            return try result!.get()
        }
    }

    /// The device stops before writing frame `at` until `release` is signalled.
    final class Gate: @unchecked Sendable {
        let reached = CountingSemaphore()
        let release = CountingSemaphore()
        let at: Int
        /// Seconds after which the device goes on unreleased (a test that would otherwise hang fails).
        let timeout: Double?
        private let passed = Atomic<Bool>(false)
        init(at: Int, timeout: Double? = nil) {
            self.at = at
            self.timeout = timeout
        }
        func check(_ written: Int) {
            guard written >= at, !passed.exchange(true, ordering: .relaxed) else { return }
            reached.signal()
            if let timeout { _ = release.wait(seconds: timeout) } else { release.wait() }
        }
    }

    /// Starts `first`; once the device holds at `gate`, starts `second`, and lets the device go
    /// on once the second's first chunk is submitted (its second read begins after that).
    static func overlap(
        _ engine: PlaybackEngine, gate: Gate, _ first: MemorySource, _ second: MemorySource,
        control: PlaybackControl? = nil
    ) -> (Background<PlaybackReport>, Background<PlaybackReport>) {
        let one = Background { try engine.play(first) }
        gate.reached.wait()
        let submitted = CountingSemaphore()
        second.onRead = { reads in if reads == 1 { submitted.signal() } }
        let two = Background { try engine.play(second, control: control) }
        submitted.wait()
        gate.release.signal()
        return (one, two)
    }

    @Test func twoPlaysAtOnceAreSummed() throws {
        let a = Self.tone(440, frames: 20_000)
        let b = Self.tone(1000, frames: 6_000)
        let gate = Gate(at: 4_800)
        let (engine, outputs) = makeEngine(formats: [.float32]) { output in output.beforeWrite = gate.check }
        let (first, second) = Self.overlap(
            engine, gate: gate, MemorySource(floats: a, channels: 1),
            MemorySource(floats: b, channels: 1))
        let reportA = try first.wait()
        let reportB = try second.wait()
        #expect(reportA.framesPlayed == 20_000 && reportB.framesPlayed == 6_000)
        #expect(outputs().count == 1, "the second play joins the open device")
        let out = outputs()[0].floatSamples
        #expect(out.count == 20_000)
        let join = 4_864
        #expect(out[..<join].elementsEqual(a[..<join]), "alone: sample-exact")
        // B joins and is summed with A for its whole length, then A goes on alone.
        let mixed = (0..<6_000).map { abs(out[join + $0] - (a[join + $0] + b[$0])) }.max()!
        #expect(mixed < 1e-6, "largest error in the mix \(mixed)")
        #expect(
            out.count == 20_000 && out[(join + 6_000)...].elementsEqual(a[(join + 6_000)...]),
            "A alone again, sample-exact")
    }

    /// A stop that reaches a stream once its last frames are mixed (its tail plays under the
    /// other) finds it heard to its end: played, not stopped, and the other plays on.
    @Test func aStopAfterAStreamsLastFrameUnderAnotherLeavesItPlayed() throws {
        let a = Self.tone(440, frames: 20_000)
        let b = Self.tone(1000, frames: 6_000)
        let gate = Gate(at: 4_800)
        let control = PlaybackControl()
        let stopped = Atomic<Bool>(false)
        let (engine, _) = makeEngine(formats: [.float32]) { output in
            output.beforeWrite = { written in
                gate.check(written)
                // On the playback thread, in the write of the block that took B's last frames.
                if let job = control.attachedJob, job.inputEnded, !stopped.exchange(true, ordering: .relaxed) {
                    control.stop()
                }
            }
        }
        let (first, second) = Self.overlap(
            engine, gate: gate, MemorySource(floats: a, channels: 1), MemorySource(floats: b, channels: 1),
            control: control)
        let reportA = try first.wait()
        let reportB = try second.wait()
        let came = stopped.load(ordering: .relaxed)
        #expect(came, "the stop came")
        #expect(!reportB.stopped && reportB.framesPlayed == 6_000, "\(reportB)")
        #expect(!reportA.stopped && reportA.framesPlayed == 20_000)
    }

    @Test func aPlayThatStartsDuckedIsScaledFromItsFirstFrame() throws {
        // 3 000 frames are 46 writes of 64 and one of 56: the device holds its first write until the
        // decoder has read to the end, so the mixer knows the input ends inside a block and must
        // not pad that block with silence.
        let a = Self.tone(440, frames: 3_000)
        let gate = Gate(at: 0)
        let (engine, outputs) = makeEngine(formats: [.float32]) { output in output.beforeWrite = gate.check }
        let source = MemorySource(floats: a, channels: 1)
        source.onRead = { reads in if reads == 1 { gate.release.signal() } }
        _ = try engine.play(source, control: PlaybackControl(gain: Gain.decibels(-12)))
        let expected = a.map { $0 * Gain.decibels(-12) }
        #expect(outputs()[0].floatSamples.count == expected.count)
        let error = zip(outputs()[0].floatSamples, expected).map { abs($0 - $1) }.max()!
        #expect(error < 1e-6)
    }

    @Test func duckingRampsSmoothlyToTheLevelAndBack() throws {
        let a = [Float](repeating: 0.5, count: 48_000)
        let control = PlaybackControl()
        let down = Gate(at: 4_800)
        let up = Gate(at: 24_000)
        let (engine, outputs) = makeEngine(formats: [.float32]) { output in
            output.beforeWrite = { written in
                down.check(written)
                up.check(written)
            }
        }
        let play = Background { try engine.play(MemorySource(floats: a, channels: 1), control: control) }
        down.reached.wait()
        control.setGain(0.25, overSeconds: 0.15)  // 7 200 frames
        down.release.signal()
        up.reached.wait()
        control.setGain(1, overSeconds: 0.4)  // 19 200 frames
        up.release.signal()
        _ = try play.wait()
        let out = outputs()[0].floatSamples
        #expect(out[..<4_864].allSatisfy { $0 == 0.5 })
        #expect(out[(4_864 + 7_200)..<24_064].allSatisfy { abs($0 - 0.125) < 1e-6 }, "ducked to a quarter")
        #expect(out[(24_064 + 19_200)...].allSatisfy { $0 == 0.5 }, "restored exactly, then alone again")
        #expect(out[4_864 + 3_600] < 0.45 && out[24_064 + 9_600] > 0.17, "ramping, not jumping")
        // Raised cosine: the largest step is about π/2 of a straight line's.
        let steps = zip(out.dropFirst(), out).map { abs($0 - $1) }
        let downStep = steps[4_800..<(4_864 + 7_200)].max()!
        let upStep = steps[24_000..<(24_064 + 19_200)].max()!
        #expect(downStep <= 0.375 * Float.pi / 2 / 7_200 * 1.01, "step \(downStep)")
        #expect(upStep <= 0.375 * Float.pi / 2 / 19_200 * 1.01, "step \(upStep)")
    }

    @Test func aStopUnderAnotherPlayFadesOutAndTheOtherGoesOn() throws {
        let a = [Float](repeating: 0.25, count: 30_000)
        let b = [Float](repeating: 0.125, count: 30_000)
        let stopB = PlaybackControl()
        let gate = Gate(at: 4_800)
        let stopAt = Gate(at: 9_600)
        let (engine, outputs) = makeEngine(formats: [.float32]) { output in
            output.beforeWrite = { written in
                gate.check(written)
                stopAt.check(written)
            }
        }
        let (first, second) = Self.overlap(
            engine, gate: gate, MemorySource(floats: a, channels: 1),
            MemorySource(floats: b, channels: 1), control: stopB)
        stopAt.reached.wait()
        stopB.stop()
        stopAt.release.signal()
        let reportA = try first.wait()
        let reportB = try second.wait()
        #expect(reportB.stopped && !reportA.stopped)
        #expect(reportA.framesPlayed == 30_000)
        #expect(
            (4_800...5_400).contains(Int(reportB.framesPlayed)),
            "B heard from 4 800 to the stop at 9 600 plus the 10 ms fade: \(reportB.framesPlayed)")
        let out = outputs()[0].floatSamples
        #expect(abs(out[9_663] - 0.375) < 1e-6)
        #expect(out[(9_664 + 480)...].allSatisfy { abs($0 - 0.25) < 1e-6 }, "A alone after B's fade")
        let steps = zip(out[9_590..<10_100], out[9_591..<10_101]).map { abs($0 - $1) }
        #expect(steps.max()! < 0.125 * Float.pi / 2 / 480 * 1.01, "no click")
    }

    @Test func aResumedPlayFadesInFromSilence() throws {
        let a = [Float](repeating: 0.5, count: 9_600)
        let (engine, outputs) = makeEngine(formats: [.float32])
        _ = try engine.play(
            MemorySource(floats: a, channels: 1), options: PlaybackOptions(fadeIn: TimeSpan(seconds: 0.05)))
        let out = outputs()[0].floatSamples
        #expect(out.count == 9_600)
        #expect(out[0] < 0.001)
        #expect(zip(out.dropFirst(), out).allSatisfy { $0 >= $1 }, "rises monotonically")
        #expect(
            abs(out[1_199] - 0.25) < 0.001, "half way through the 50 ms raised cosine, half the level: \(out[1_199])")
        #expect(zip(out.dropFirst(), out).map { $0 - $1 }.max()! <= 0.5 * Float.pi / 2 / 2_400 * 1.01, "no step")
        #expect(out[2_400...].allSatisfy { $0 == 0.5 })
    }

    @Test func aStereoPlayJoiningAMonoDeviceIsMixedDown() throws {
        let a = [Float](repeating: 0.25, count: 20_000)
        let stereo = [Float](unsafeUninitializedCapacity: 8_000) { buffer, count in
            for i in 0..<4_000 {
                buffer[2 * i] = 0.25
                buffer[2 * i + 1] = 0.125
            }
            count = 8_000
        }
        let gate = Gate(at: 4_800)
        let (engine, outputs) = makeEngine(formats: [.float32]) { output in output.beforeWrite = gate.check }
        let (first, second) = Self.overlap(
            engine, gate: gate, MemorySource(floats: a, channels: 1),
            MemorySource(floats: stereo, channels: 2))
        _ = try first.wait()
        _ = try second.wait()
        let out = outputs()[0].floatSamples
        #expect(outputs()[0].format.channels == 1)
        #expect(out[4_864..<8_864].allSatisfy { abs($0 - (0.25 + 0.1875)) < 1e-6 }, "A + the mean of B's channels")
    }

    @Test func aPlayAtAnotherRateIsResampledToTheOpenDevice() throws {
        let a = [Float](repeating: 0.25, count: 40_000)
        let b = Self.tone(1_000, frames: 12_000, amplitude: 0.125, rate: 24_000)  // 0.5 s at 24 kHz
        let gate = Gate(at: 4_800)
        let (engine, outputs) = makeEngine(formats: [.float32]) { output in output.beforeWrite = gate.check }
        let (first, second) = Self.overlap(
            engine, gate: gate, MemorySource(floats: a, channels: 1),
            MemorySource(floats: b, channels: 1, rate: 24_000))
        _ = try first.wait()
        let report = try second.wait()
        #expect(outputs().count == 1 && outputs()[0].format.sampleRate == 48_000, "the open device is kept")
        #expect(report.framesPlayed == 12_000, "heard, in the file's frames")
        // B, less A's constant, is a 1 kHz tone 24 000 device frames long starting where it joined.
        let out = outputs()[0].floatSamples.map { $0 - 0.25 }
        let start = 4_864
        let body = Array(out[(start + 100)..<(start + 23_900)])
        let crossings = zip(body, body.dropFirst()).count { $0 < 0 && $1 >= 0 }
        #expect((494...497).contains(crossings), "1 kHz over 0.496 s: \(crossings) cycles")
        #expect(abs(body.map { abs($0) }.max()! - 0.125) < 0.002)
        #expect(out[(start + 24_050)...].allSatisfy { abs($0) < 1e-6 }, "A alone after B's 24 000 frames")
    }
}

@Suite struct ClipFeedTests {
    /// Two passes of a 24 kHz clip resampled to 48 kHz come out as one stream: twice the
    /// length, no gap or click at the seam, the tail flushed once at the end.
    @Test func loopsAreResampledAcrossTheSeam() throws {
        let tone = MixingEngineTests.tone(1_000, frames: 2_400, amplitude: 0.25, rate: 24_000)  // 100 ms, whole cycles
        let source = MemorySource(floats: tone, channels: 1, rate: 24_000)
        let feed = ClipFeed(
            source: source, ringFormat: .float32,
            resampler: try Resampler(channels: 1, inputRate: 24_000, outputRate: 48_000), loops: 1)
        var out: [Float] = []
        var buffer = [Float](repeating: 0, count: 1_000)
        while let got = try buffer.withUnsafeMutableBytes({ try feed.fill($0.baseAddress!, room: 1_000) }) {
            out += buffer.prefix(got)
        }
        #expect(out.count == 9_600, "two 100 ms passes at 48 kHz")
        // A 1 kHz sine at 48 kHz moves at most 2π·1000/48000·0.25 ≈ 0.033 per frame; a seam would jump.
        let steps = zip(out.dropFirst(), out).map { abs($0 - $1) }
        #expect(steps[100..<9_500].max()! < 0.035, "largest step \(steps.max()!)")
        #expect(abs(out[4_800...].max()! - 0.25) < 0.005, "the second pass at full level")
    }
}
