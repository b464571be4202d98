import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

@Suite struct ResamplerTests {
    static let conversions = [(44_100, 48_000), (48_000, 44_100), (22_050, 48_000)]

    /// Resamples all of `input` (interleaved) in calls of `chunk` frames, then flushes the tail
    /// `finishCapacity` frames at a time. Every call must take its whole chunk.
    private func resample(
        _ input: [Float], channels: Int = 1, from inputRate: Int, to outputRate: Int,
        chunk: Int? = nil, finishCapacity: Int? = nil
    ) throws -> [Float] {
        let resampler = try Resampler(channels: channels, inputRate: inputRate, outputRate: outputRate)
        return run(resampler, input, chunk: chunk, finishCapacity: finishCapacity)
    }

    private func run(_ resampler: Resampler, _ input: [Float], chunk: Int? = nil, finishCapacity: Int? = nil) -> [Float]
    {
        let channels = resampler.channels
        let frames = input.count / channels
        let chunk = max(1, chunk ?? frames)
        let capacity = resampler.outputCapacity(forInputFrames: chunk)
        var buffer = [Float](repeating: .nan, count: capacity * channels)
        var output: [Float] = []
        input.withUnsafeBufferPointer { input in
            var position = 0
            while position < frames {
                let count = min(chunk, frames - position)
                let (consumed, produced) = resampler.process(
                    input.baseAddress! + position * channels, frames: count,
                    into: &buffer, capacity: capacity)
                #expect(consumed == count, "outputCapacity(forInputFrames: \(count)) too small")
                if consumed == 0 { return }
                output += buffer[0..<produced * channels]
                position += consumed
            }
        }
        let finishCapacity = finishCapacity ?? capacity
        while true {
            let produced = resampler.finish(into: &buffer, capacity: finishCapacity)
            if produced == 0 { break }
            output += buffer[0..<produced * channels]
        }
        return output
    }

    private func sine(_ frequency: Double, rate: Int, frames: Int, amplitude: Double = 0.5) -> [Float] {
        (0..<frames).map { Float(amplitude * sin(2 * .pi * frequency * Double($0) / Double(rate))) }
    }

    private func interleave(_ left: [Float], _ right: [Float]) -> [Float] {
        zip(left, right).flatMap { [$0, $1] }
    }

    private func channel(_ samples: [Float], _ index: Int, of channels: Int) -> [Float] {
        stride(from: index, to: samples.count, by: channels).map { samples[$0] }
    }

    /// Least-squares amplitude of the `frequency` component of `samples`.
    private func amplitude(of frequency: Double, in samples: ArraySlice<Float>, rate: Int) -> Double {
        var ss = 0.0
        var cc = 0.0
        var sc = 0.0
        var ys = 0.0
        var yc = 0.0
        for index in samples.indices {
            let phase = 2 * .pi * frequency * Double(index) / Double(rate)
            let (s, c, y) = (sin(phase), cos(phase), Double(samples[index]))
            ss += s * s
            cc += c * c
            sc += s * c
            ys += y * s
            yc += y * c
        }
        let determinant = ss * cc - sc * sc
        let (a, b) = ((ys * cc - yc * sc) / determinant, (yc * ss - ys * sc) / determinant)
        return (a * a + b * b).squareRoot()
    }

    /// Frequency from the first and last upward zero crossings (linearly interpolated).
    private func frequency(of samples: ArraySlice<Float>, rate: Int) -> Double {
        var crossings: [Double] = []
        for index in samples.indices.dropFirst() where samples[index - 1] < 0 && samples[index] >= 0 {
            let (before, after) = (Double(samples[index - 1]), Double(samples[index]))
            crossings.append(Double(index - 1) + before / (before - after))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / (last - first)
    }

    /// The middle of `samples`, a whole number of 10 ms (a whole number of periods
    /// of 1 and 3 kHz, so one tone does not leak into the fit of the other).
    private func steady(_ samples: [Float], rate: Int) -> ArraySlice<Float> {
        let period = rate / 100
        return samples[1_000..<(1_000 + (samples.count - 2_000) / period * period)]
    }

    private func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    @Test(arguments: conversions)
    func totalLengthIsRoundedRatio(inputRate: Int, outputRate: Int) throws {
        for frames in [1, 2, 100, 12_345, inputRate] {
            let output = try resample([Float](repeating: 0.25, count: frames), from: inputRate, to: outputRate)
            let expected = (Double(frames) * Double(outputRate) / Double(inputRate)).rounded()
            #expect(
                abs(Double(output.count) - expected) <= 2,
                "\(frames) frames at \(inputRate) Hz → \(output.count) at \(outputRate) Hz")
        }
    }

    @Test(arguments: conversions)
    func sineKeepsFrequencyAndAmplitude(inputRate: Int, outputRate: Int) throws {
        let output = try resample(sine(1_000, rate: inputRate, frames: inputRate), from: inputRate, to: outputRate)
        let steady = steady(output, rate: outputRate)
        #expect(abs(frequency(of: steady, rate: outputRate) - 1_000) < 0.01)
        #expect(abs(decibels(amplitude(of: 1_000, in: steady, rate: outputRate) / 0.5)) < 0.1)
    }

    /// A step at input frame k crosses half its height at k − ½ (a band-limited step is
    /// centred between the two samples); impulses at the start, middle and last frames
    /// peak at k. The last one shows `finish` flushes the tail.
    @Test(arguments: conversions)
    func onsetsStayAligned(inputRate: Int, outputRate: Int) throws {
        let ratio = Double(outputRate) / Double(inputRate)
        let frames = 10_000
        for onset in [0, 1, 100, 5_001] {
            var input = [Float](repeating: 0, count: frames)
            for index in onset..<frames { input[index] = 0.5 }
            let output = try resample(input, from: inputRate, to: outputRate)
            let index = try #require(output.firstIndex { $0 >= 0.25 })
            // Interpolated crossing; the first output frame has nothing before it.
            let crossing =
                index == 0
                ? 0 : Double(index - 1) + Double(0.25 - output[index - 1]) / Double(output[index] - output[index - 1])
            #expect(abs(crossing - max(0, Double(onset) - 0.5) * ratio) <= 2, "step at \(onset) crosses at \(crossing)")
        }
        for click in [0, 100, 5_001, frames - 3, frames - 1] {
            var input = [Float](repeating: 0, count: frames)
            input[click] = 1
            let output = try resample(input, from: inputRate, to: outputRate)
            let peak = try #require(output.indices.max { output[$0] < output[$1] })
            #expect(abs(Double(peak) - Double(click) * ratio) <= 2, "click at \(click) peaks at \(peak)")
            #expect(output[peak] > 0.5, "click at \(click) lost (peak \(output[peak]))")
        }
    }

    @Test(arguments: conversions)
    func chunkingDoesNotChangeTheOutput(inputRate: Int, outputRate: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let input = (0..<2 * 12_000).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        let whole = try resample(input, channels: 2, from: inputRate, to: outputRate)
        for chunk in [1, 7, 333, 4_096] {
            let chunked = try resample(
                input, channels: 2, from: inputRate, to: outputRate, chunk: chunk, finishCapacity: 1)
            try #require(chunked.count == whole.count, "chunks of \(chunk)")
            let difference = zip(whole, chunked).map { abs($0 - $1) }.max() ?? 0
            #expect(difference <= 1e-6, "chunks of \(chunk) differ by \(difference)")
        }
    }

    @Test(arguments: conversions)
    func stereoChannelsStayApart(inputRate: Int, outputRate: Int) throws {
        let left = sine(1_000, rate: inputRate, frames: inputRate / 2)
        let right = sine(3_000, rate: inputRate, frames: inputRate / 2, amplitude: 0.25)
        let output = try resample(interleave(left, right), channels: 2, from: inputRate, to: outputRate)
        let outLeft = steady(channel(output, 0, of: 2), rate: outputRate)
        let outRight = steady(channel(output, 1, of: 2), rate: outputRate)
        #expect(abs(decibels(amplitude(of: 1_000, in: outLeft, rate: outputRate) / 0.5)) < 0.1)
        #expect(abs(decibels(amplitude(of: 3_000, in: outRight, rate: outputRate) / 0.25)) < 0.1)
        #expect(decibels(amplitude(of: 3_000, in: outLeft, rate: outputRate)) < -90)
        #expect(decibels(amplitude(of: 1_000, in: outRight, rate: outputRate)) < -90)
    }

    @Test func eightKilohertzMonoToFortyEight() throws {
        let input = sine(1_000, rate: 8_000, frames: 8_000)
        let output = try resample(input, from: 8_000, to: 48_000, chunk: 160)
        #expect(output.count == 48_000)
        let steady = steady(output, rate: 48_000)
        #expect(abs(frequency(of: steady, rate: 48_000) - 1_000) < 0.01)
        #expect(abs(decibels(amplitude(of: 1_000, in: steady, rate: 48_000) / 0.5)) < 0.1)
    }

    @Test func badArgumentsThrow() {
        #expect(throws: AnnounceError.self) { try Resampler(channels: 0, inputRate: 44_100, outputRate: 48_000) }
        #expect(throws: AnnounceError.self) { try Resampler(channels: -1, inputRate: 44_100, outputRate: 48_000) }
        #expect(throws: AnnounceError.self) { try Resampler(channels: 2, inputRate: 0, outputRate: 48_000) }
        #expect(throws: AnnounceError.self) { try Resampler(channels: 2, inputRate: 44_100, outputRate: 0) }
        #expect(throws: AnnounceError.self) { try Resampler(channels: 2, inputRate: 44_100, outputRate: 1 << 40) }
        #expect(throws: AnnounceError.self) {
            try Resampler(channels: 2, inputRate: 44_100, outputRate: 48_000, quality: 11)
        }
        #expect(throws: AnnounceError.self) {
            try Resampler(channels: 2, inputRate: 44_100, outputRate: 48_000, quality: -1)
        }
        #expect(throws: Never.self) { try Resampler(channels: 2, inputRate: 44_100, outputRate: 48_000) }
    }
}
