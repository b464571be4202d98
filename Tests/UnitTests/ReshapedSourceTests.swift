import Foundation
import Testing

@testable import AnnounceEngine
@testable import AnnounceModel

/// `--rate`, `--pitch` and `--skip-silence` over any Source, read as the engine reads it: what
/// comes out, and where in the source each frame out was.
@Suite struct ReshapedSourceTests {
    static let rate = 48_000

    /// `seconds` of a half-scale sine (0 seconds of frequency 0: silence), mono float.
    static func tone(_ parts: [(frequency: Double, seconds: Double)]) -> [Float] {
        var samples: [Float] = []
        for part in parts {
            let count = Int(part.seconds * Double(rate))
            samples += (0..<count).map { Float(0.5 * sin(2 * Double.pi * part.frequency * Double($0) / Double(rate))) }
        }
        return samples
    }

    /// Every frame, read in the engine's chunk sizes.
    static func readAll(_ source: any Source) throws -> [Float] {
        var out: [Float] = []
        var buffer = [Float](repeating: 0, count: 8192 * source.format.channels)
        while true {
            let got = try buffer.withUnsafeMutableBytes {
                try source.read(into: $0.baseAddress!, frames: 8192, as: .float32)
            }
            if got == 0 { return out }
            out += buffer.prefix(got * source.format.channels)
        }
    }

    /// Frequency from zero crossings (upward, linearly interpolated) over `samples`.
    static func frequency(_ samples: ArraySlice<Float>) -> Double {
        var crossings: [Double] = []
        var index = samples.startIndex
        while index + 1 < samples.endIndex {
            let (a, b) = (samples[index], samples[index + 1])
            if a < 0 && b >= 0 { crossings.append(Double(index) + Double(-a / (b - a))) }
            index += 1
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / (last - first)
    }

    @Test func nothingToDoPlaysTheSourceItself() throws {
        let source = MemorySource(floats: Self.tone([(440, 0.1)]), channels: 1)
        #expect(try ReshapedSource.applying(Reshaping(), to: source) === source)
    }

    @Test(arguments: [0.25, 0.5, 2, 8])
    func tempoChangesTheLengthAndKeepsThePitch(rate: Double) throws {
        let source = MemorySource(floats: Self.tone([(440, 2)]), channels: 1)
        let reshaped = try ReshapedSource.applying(Reshaping(rate: rate), to: source)
        #expect(
            reshaped.format.exactSampleFormat == .float32 && reshaped.duration == .exact(96_000),
            "lengths stay source time")
        let out = try Self.readAll(reshaped)
        #expect(abs(Double(out.count) - 96_000 / rate) <= 96_000 / rate * 0.01, "\(out.count) frames")
        // A tone's period is not a whole number of samples (109.09 at 48 kHz): each splice slips
        // its phase a little, which shows at 8× (a splice every 31 frames out) as -0.6%.
        #expect(abs(Self.frequency(out[...]) - 440) < (rate <= 2 ? 2 : 3), "\(Self.frequency(out[...])) Hz")
        #expect(reshaped.sourceFrames(forRead: Int64(out.count)) == 96_000, "the whole source heard")
        // Within 20 ms, as the map is (aPositionOutMapsToTheSameSoundIn).
        #expect(
            abs(reshaped.sourceFrames(forRead: Int64(out.count / 2)) - 48_000) <= 960, "half way out is half way in")
    }

    @Test(arguments: [(12.0, 880.0), (-12, 220), (7, 659.26)])
    func pitchShiftsTheFrequencyAndKeepsTheLength(semitones: Double, expected: Double) throws {
        let source = MemorySource(floats: Self.tone([(440, 2)]), channels: 1)
        let out = try Self.readAll(try ReshapedSource.applying(Reshaping(semitones: semitones), to: source))
        #expect(abs(out.count - 96_000) <= 240, "\(out.count) frames")
        #expect(
            abs(Self.frequency(out[4_800..<91_200]) - expected) < expected * 0.005, "\(Self.frequency(out[...])) Hz")
    }

    /// 0.5 s tone, 1 s pause, 0.5 s tone, 0.5 s trailing silence: the pause is cut to 300 ms,
    /// the trailing silence goes, and positions out map to the source across the cut.
    @Test func skipSilenceCutsALongPauseToTheGapAndTrimsTheEnds() throws {
        let samples = [Float](repeating: 0, count: 4_800) + Self.tone([(440, 0.5), (0, 1), (660, 0.5), (0, 0.5)])
        let source = MemorySource(floats: samples, channels: 1)
        let reshaped = try ReshapedSource.applying(Reshaping(silence: SilenceRule(gap: 0.3, level: -50)), to: source)
        let out = try Self.readAll(reshaped)
        // The sines start at 0: their first sample is silence too, so is cut with what leads.
        #expect(abs(out.count - Int(1.3 * 48_000)) <= 2, "\(out.count) frames")
        #expect(abs(out[0]) > 0, "leading silence trimmed")
        #expect(reshaped.sourceFrames(forRead: 0) == 4_801)
        let afterPause = Int64(24_000 + 14_400) - 1  // output frame of the second tone's start
        #expect(abs(reshaped.sourceFrames(forRead: afterPause) - (4_800 + 72_000)) <= 2)
        #expect(
            reshaped.sourceFrames(forRead: Int64(out.count)) == Int64(samples.count), "trailing silence counts as heard"
        )
    }

    /// Of a long pause, the latest part plays: the sound after it keeps its own lead-in.
    @Test func theLastPartOfALongPauseIsKept() throws {
        // A pause of quiet steps (each below -50 dBFS) that say where in it a frame was.
        let pause = (0..<48_000).map { Float($0 / 4_800 + 1) * 1e-4 }
        let samples = Self.tone([(440, 0.1)]) + pause + Self.tone([(440, 0.1)])
        let reshaped = try ReshapedSource(
            MemorySource(floats: samples, channels: 1), Reshaping(silence: SilenceRule(gap: 0.1, level: -50)))
        let out = try Self.readAll(reshaped)
        // After the first tone (its leading zero cut): 100 ms held, the last of them the second
        // tone's first sample (a zero, silent too).
        let kept = out[4_799..<4_799 + 4_799]
        #expect(kept.allSatisfy { abs($0 - 10e-4) < 5e-5 }, "the pause's tenth step, its last 100 ms")
        #expect(out[4_799 + 4_799] == 0 && abs(out[4_799 + 4_800]) > 0.02, "then the second tone")
    }

    /// `--loops`: after the end the engine seeks to 0; the count goes on over both passes.
    @Test func aSecondPassCountsOnFromTheFirst() throws {
        let source = MemorySource(floats: Self.tone([(440, 1)]), channels: 1)
        let reshaped = try ReshapedSource.applying(Reshaping(rate: 2), to: source)
        let first = try Self.readAll(reshaped)
        try reshaped.seek(toFrame: 0)
        let second = try Self.readAll(reshaped)
        #expect(abs(first.count - second.count) <= 2)
        #expect(reshaped.sourceFrames(forRead: Int64(first.count)) == 48_000)
        #expect(reshaped.sourceFrames(forRead: Int64(first.count + second.count)) == 96_000)
        #expect(abs(reshaped.sourceFrames(forRead: Int64(first.count + second.count / 2)) - 72_000) <= 960)
    }

    /// The map is checked on the sound itself: a source that alternates 300 and 600 Hz every
    /// half second; where each change is heard in the output, mapped back, must be where it is
    /// in the source. This is what puts a resumed item at the right word.
    @Test(arguments: [(0.5, 0.0), (2, 0), (4, 0), (8, 0), (1, 12), (2, -7)])
    func aPositionOutMapsToTheSameSoundIn(rate: Double, semitones: Double) throws {
        let parts = (0..<16).map { (frequency: $0 % 2 == 0 ? 300.0 : 600.0, seconds: 0.5) }
        let reshaped = try ReshapedSource(
            MemorySource(floats: Self.tone(parts), channels: 1),
            Reshaping(rate: rate, semitones: semitones))
        let out = try Self.readAll(reshaped).map(Double.init)
        let shift = pow(2, semitones / 12)
        // 600 Hz louder than 300 Hz in 10 ms windows every 1 ms: the changes, where the side flips.
        let (window, hop) = (480, 48)
        var changes: [Int] = []
        var previous: Bool?
        for start in stride(from: 0, to: out.count - window, by: hop) {
            let slice = out[start..<start + window]
            let high = goertzel(600 * shift, slice) > goertzel(300 * shift, slice)
            // between the two windows
            if let previous, previous != high { changes.append(start + window / 2 - hop / 2) }
            previous = high
        }
        try #require(changes.count == 15, "\(changes.count) changes heard")
        var worst = 0.0
        for (index, output) in changes.enumerated() {
            let error = Double(reshaped.sourceFrames(forRead: Int64(output)) - Int64(index + 1) * 24_000) / 48
            worst = max(worst, abs(error))
        }
        // Seen: 5 ms at 0.5×, 10 at 2×, 15 at 8× (where 1 ms heard is 8 of the source).
        #expect(worst <= 20, "worst \(worst) ms")
    }
}

/// Power of `frequency` in `samples` (Goertzel), at 48 kHz.
private func goertzel(_ frequency: Double, _ samples: ArraySlice<Double>) -> Double {
    let coefficient = 2 * cos(2 * Double.pi * frequency / 48_000)
    var (previous, beforePrevious) = (0.0, 0.0)
    for sample in samples {
        (previous, beforePrevious) = (sample + coefficient * previous - beforePrevious, previous)
    }
    return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
}
