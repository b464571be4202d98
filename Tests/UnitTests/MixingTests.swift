import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// The mixer's pure stages: gain ramps (ducking), the soft limiter, the stream mixer.
@Suite struct MixingTests {
    static let rate = 48_000

    /// Gains a ramp gives, frame by frame, applied through `apply` in blocks of `block` frames.
    private func render(_ ramp: inout GainRamp, frames: Int, block: Int = 441) -> [Float] {
        var gains = [Float](repeating: 1, count: frames * 2)
        gains.withUnsafeMutableBufferPointer { buffer in
            var done = 0
            while done < frames {
                let n = min(block, frames - done)
                ramp.apply(to: buffer.baseAddress! + done * 2, frames: n, channels: 2)
                done += n
            }
        }
        // Both channels of a frame get the same gain.
        for frame in 0..<frames { #expect(gains[frame * 2] == gains[frame * 2 + 1]) }
        return stride(from: 0, to: gains.count, by: 2).map { gains[$0] }
    }

    private func maxStep(_ gains: [Float], from previous: Float) -> Float {
        var last = previous
        var largest: Float = 0
        for gain in gains {
            largest = max(largest, abs(gain - last))
            last = gain
        }
        return largest
    }

    /// The raised cosine's closed-form bound on the change between two frames of a ramp
    /// from `from` to `to` over `frames`: |Δ|·sin(π/2N) (see GainRamp).
    private func stepBound(from: Float, to: Float, frames: Int) -> Float {
        Float(Double(abs(to - from)) * sin(Double.pi / (2 * Double(frames))))
    }

    private func decibels(_ gain: Float) -> Float { 20 * log10(gain) }

    private func frames(_ seconds: Double) -> Int { Int(TimeSpan(seconds: seconds).frames(atRate: Self.rate)) }

    /// The gain the ramp gives its next frame, read through `apply`.
    private func nextGain(_ ramp: inout GainRamp) -> Float {
        var sample: Float = 1
        ramp.apply(to: &sample, frames: 1, channels: 1)
        return sample
    }

    /// One block through `beginBlock`, `accumulate` for each (stream, samples) and `finishBlock`.
    private func mixBlock(_ mixer: StreamMixer, frames: Int, _ inputs: [(StreamMixer.StreamID, [Float])]) -> [Float] {
        mixer.beginBlock(frames: frames)
        for (id, samples) in inputs { mixer.accumulate(id, samples, frames: frames) }
        return Array(UnsafeBufferPointer(start: mixer.finishBlock(), count: frames * mixer.channels))
    }

    // MARK: Gain

    @Test func decibelHelpers() {
        #expect(Gain.decibels(0) == 1)
        #expect(abs(Gain.decibels(-12) - 0.251_188_64) < 1e-6)
        #expect(abs(Gain.decibels(-6.020_6) - 0.5) < 1e-5)
        #expect(Gain.decibels(-.infinity) == 0)
    }

    // MARK: GainRamp

    /// DESIGN §3: duck to -12 dB over 150 ms, restore over 400 ms, never a click.
    @Test func duckRampShape() {
        let down = frames(GainRamp.duckDownSeconds)
        let up = frames(GainRamp.duckUpSeconds)
        #expect(down == 7_200 && up == 19_200)
        let duck = Gain.decibels(Float(UserConfiguration.defaultDuckLevel))

        var ramp = GainRamp()
        ramp.setTarget(duck, overFrames: down)
        #expect(!ramp.isSettled && ramp.current == 1)
        var falling = render(&ramp, frames: down - 1)
        #expect(!ramp.isSettled, "one frame short of 150 ms it still ramps")
        falling += render(&ramp, frames: 1)
        // At 150 ms (the 7200th frame) it is at -12 dB, and stays there.
        #expect(abs(decibels(falling[down - 1]) + 12) < 0.1)
        #expect(falling[down - 1] == duck && ramp.isSettled && ramp.current == duck)
        #expect(abs(decibels(falling[down / 2]) + 12) > 1)  // still on its way half-way
        #expect(zip(falling, falling.dropFirst()).allSatisfy { $0 >= $1 })
        let downStep = maxStep(falling, from: 1)
        let downBound = stepBound(from: 1, to: duck, frames: down)
        // |Δ|·sin(π/2N) = 0.7488 · 2.18e-4 ≈ 1.63e-4 per sample (a linear ramp: 1.04e-4; linear in dB: 1.92e-4).
        #expect(abs(downBound - 1.634e-4) < 1e-6)
        // Measured within one Float ulp (rounding of the two gains) of the closed form.
        #expect(downStep <= downBound + Float(1).ulp && downStep > downBound * 0.999)
        // No corner: the first and last steps are tiny (the slope is zero at both ends).
        #expect(1 - falling[0] < 1e-7 && falling[down - 2] - falling[down - 1] < 1e-7)

        let held = render(&ramp, frames: 1_000)
        #expect(held.allSatisfy { $0 == duck })

        ramp.setTarget(1, overFrames: up)
        let rising = render(&ramp, frames: up, block: 1_024)
        #expect(zip(rising, rising.dropFirst()).allSatisfy { $0 <= $1 })
        let upStep = maxStep(rising, from: duck)
        let upBound = stepBound(from: duck, to: 1, frames: up)
        #expect(abs(upBound - 6.126e-5) < 1e-7)
        #expect(upStep <= upBound + Float(1).ulp && upStep > upBound * 0.999)
        // Back at exactly unity at 400 ms, settled, and then a no-op.
        #expect(rising[up - 1] == 1 && rising[up - 200] < 1)
        #expect(ramp.isSettled && ramp.current == 1)
        #expect(render(&ramp, frames: 100).allSatisfy { $0 == 1 })
    }

    @Test func rampFollowsTheRaisedCosineWhateverTheBlockSize() {
        let frames = 1_000
        var whole = GainRamp(gain: 0.2)
        whole.setTarget(0.9, overFrames: frames)
        var single = whole
        let inOne = render(&whole, frames: frames, block: frames)
        let oneByOne = render(&single, frames: frames, block: 1)
        for k in 1...frames {
            let expected = 0.2 + 0.7 * (1 - cos(Double.pi * Double(k) / Double(frames))) / 2
            #expect(abs(Double(inOne[k - 1]) - expected) < 1e-6)
            #expect(abs(inOne[k - 1] - oneByOne[k - 1]) < 1e-6)
        }
        #expect(inOne.last == 0.9 && oneByOne.last == 0.9)
    }

    @Test func retargetingMidRampStartsFromTheCurrentGain() {
        var ramp = GainRamp()
        ramp.setTarget(0, overFrames: 1_000)
        let first = render(&ramp, frames: 300)
        let reached = ramp.current
        #expect(reached == first.last! && reached > 0 && reached < 1)
        ramp.setTarget(1, overFrames: 500)
        #expect(ramp.current == reached && !ramp.isSettled)
        let second = render(&ramp, frames: 500)
        // The step across the retarget is no larger than either ramp allows.
        let bound = max(stepBound(from: 1, to: 0, frames: 1_000), stepBound(from: reached, to: 1, frames: 500))
        #expect(maxStep(first + second, from: 1) <= bound + Float(1).ulp)
        #expect(abs(second[0] - reached) <= bound)
        #expect(second.last == 1 && ramp.isSettled)
    }

    @Test func immediateTargetsAndConstantGain() {
        var ramp = GainRamp()
        ramp.setTarget(0.5, overFrames: 0)
        #expect(ramp.isSettled && ramp.current == 0.5)
        #expect(render(&ramp, frames: 10).allSatisfy { $0 == 0.5 })
        ramp.setTarget(0.5, overFrames: 1_000)  // already there: nothing to ramp
        #expect(ramp.isSettled)
        ramp.setTarget(0, overFrames: 0)
        #expect(nextGain(&ramp) == 0 && ramp.isSettled)
        ramp.setTarget(1, overFrames: 2)
        #expect(nextGain(&ramp) == 0.5 && nextGain(&ramp) == 1 && ramp.isSettled)

        // Unity leaves samples untouched (bit-exact, NaN included).
        var unity = GainRamp()
        var samples: [Float] = [0.1, -0.7, .nan, 3]
        samples.withUnsafeMutableBufferPointer { unity.apply(to: $0.baseAddress!, frames: 2, channels: 2) }
        #expect(samples[0] == 0.1 && samples[1] == -0.7 && samples[2].isNaN && samples[3] == 3)
    }

    // MARK: SoftLimiter

    @Test func limiterIsTheIdentityBelowTheKnee() {
        let limiter = SoftLimiter()
        #expect(abs(decibels(limiter.knee) + 1) < 1e-5)
        let knee = limiter.knee
        for x in [0, knee, -knee, knee.nextDown, -knee.nextDown, Float.leastNonzeroMagnitude, 0.5, -0.25] {
            #expect(limiter(x) == x)
        }
        let changed = (-10_000...10_000).map { knee * Float($0) / 10_000 }.filter { limiter($0) != $0 }
        #expect(changed.isEmpty)
    }

    @Test func limiterIsMonotonicAndBoundedUpToSixteen() {
        let limiter = SoftLimiter()
        var previous = limiter(-16)
        #expect(previous > -1 && previous == -limiter.ceiling)
        var bad: [Float] = []
        for i in -160_000...160_000 {
            let x = Float(i) / 10_000
            let y = limiter(x)
            // Monotonic, strictly inside ±1, odd.
            if y < previous || !(abs(y) < 1) || abs(y) > limiter.ceiling || limiter(-x) != -y { bad.append(x) }
            previous = y
        }
        #expect(bad.isEmpty)
        for x in [Float.infinity, .greatestFiniteMagnitude, 1e6, 1.0000001] {
            #expect(limiter(x) < 1 && limiter(-x) > -1)
        }
        #expect(limiter(.nan) == 0)
        // The ceiling converts to every integer format without clipping or wrapping.
        #expect((limiter.ceiling * 32_768).rounded() == 32_767)
        #expect((limiter.ceiling * 2_147_483_648).rounded() <= 2_147_483_520)
    }

    @Test func limiterIsContinuousAtTheKnee() {
        let limiter = SoftLimiter()
        let knee = limiter.knee
        // Value: just above the knee is within a couple of ulps of the input.
        #expect(abs(limiter(knee.nextUp) - knee.nextUp) <= 2 * knee.ulp)
        // Slope: 1 on both sides of the knee.
        let h: Float = 1e-4
        let below = (limiter(knee) - limiter(knee - h)) / h
        let above = (limiter(knee + h) - limiter(knee)) / h
        #expect(abs(below - 1) < 1e-3 && abs(above - 1) < 5e-3)
        // It bends: 1.0 and a sum of two full-scale signals come out below full scale.
        #expect(limiter(1) > knee && limiter(1) < 1 && limiter(2) > limiter(1))
    }

    @Test func limiterProcessMatchesPerSample() {
        let limiter = SoftLimiter()
        let input: [Float] = [0, 0.5, -0.95, 1.2, -3, 16, .nan, -.infinity]
        var buffer = input
        buffer.withUnsafeMutableBufferPointer { limiter.process($0.baseAddress!, count: $0.count) }
        for (x, y) in zip(input, buffer) { #expect(y == limiter(x)) }
        #expect(buffer[6] == 0)
    }

    // MARK: StreamMixer

    private func sine(_ frequency: Double, amplitude: Float, frames: Int, channels: Int = 1) -> [Float] {
        (0..<frames * channels).map { i in
            amplitude * Float(sin(2 * Double.pi * frequency * Double(i / channels) / Double(Self.rate)))
        }
    }

    @Test func twoSinesSumExactlyBelowTheKnee() {
        let frames = 480
        let mixer = StreamMixer(channels: 2, maxStreams: 4, maxFrames: frames)
        let a = sine(440, amplitude: 0.4, frames: frames)  // mono: both channels
        let b = sine(660, amplitude: 0.4, frames: frames, channels: 2)
        let idA = mixer.addStream(channels: 1)!
        let idB = mixer.addStream(channels: 2)!
        mixer.beginBlock(frames: frames)
        #expect(mixer.accumulate(idA, a, frames: frames) == frames)
        #expect(mixer.accumulate(idB, b, frames: frames) == frames)
        let out = Array(UnsafeBufferPointer(start: mixer.finishBlock(), count: frames * 2))
        for frame in 0..<frames {
            for channel in 0..<2 { #expect(out[frame * 2 + channel] == a[frame] + b[frame * 2 + channel]) }
        }
    }

    @Test func eachStreamHasItsOwnGain() {
        let frames = 256
        let mixer = StreamMixer(channels: 1, maxStreams: 3, maxFrames: frames)
        let a = sine(440, amplitude: 0.5, frames: frames)
        let b = sine(1_000, amplitude: 0.5, frames: frames)
        let c = sine(3_000, amplitude: 0.5, frames: frames)
        let idA = mixer.addStream(channels: 1, gain: 0.5)!
        let idB = mixer.addStream(channels: 1, gain: 0.25)!
        let idC = mixer.addStream(channels: 1, gain: 1)!
        mixer.setGain(0, of: idC, overFrames: 200)  // c fades out over the block
        var reference = GainRamp()
        reference.setTarget(0, overFrames: 200)
        mixer.beginBlock(frames: frames)
        mixer.accumulate(idA, a, frames: frames)
        mixer.accumulate(idB, b, frames: frames)
        mixer.accumulate(idC, c, frames: frames)
        let out = Array(UnsafeBufferPointer(start: mixer.finishBlock(), count: frames))
        for i in 0..<frames {
            let expected = a[i] * 0.5 + b[i] * 0.25 + c[i] * nextGain(&reference)
            #expect(abs(out[i] - expected) <= 1e-6)
        }
        #expect(mixer.ramp(of: idC)!.isSettled && mixer.ramp(of: idC)!.current == 0)
        #expect(mixer.ramp(of: idA)!.current == 0.5)

        // A stream at gain 0 adds nothing.
        mixer.beginBlock(frames: frames)
        mixer.accumulate(idC, c, frames: frames)
        #expect(UnsafeBufferPointer(start: mixer.finishBlock(), count: frames).allSatisfy { $0 == 0 })
    }

    @Test func silenceWhenNoStreamPlays() {
        let mixer = StreamMixer(channels: 2, maxStreams: 2, maxFrames: 64)
        // A loud block first, so silence has to come from clearing the bus.
        let id = mixer.addStream(channels: 2)!
        let loud = [Float](repeating: 0.9, count: 128)
        mixer.beginBlock(frames: 64)
        mixer.accumulate(id, loud, frames: 64)
        _ = mixer.finishBlock()
        mixer.removeStream(id)
        #expect(mixer.activeStreams == 0)
        mixer.beginBlock(frames: 64)
        #expect(UnsafeBufferPointer(start: mixer.finishBlock(), count: 128).allSatisfy { $0 == 0 })
        // The removed stream's samples no longer reach the bus.
        #expect(mixBlock(mixer, frames: 64, [(id, loud)]).allSatisfy { $0 == 0 })
    }

    @Test func aStreamRemovedMidwayStopsContributing() {
        let frames = 100
        let mixer = StreamMixer(channels: 1, maxStreams: 2, maxFrames: frames)
        let a = sine(440, amplitude: 0.3, frames: frames * 2)
        let b = sine(550, amplitude: 0.3, frames: frames * 2)
        let idA = mixer.addStream(channels: 1)!
        let idB = mixer.addStream(channels: 1)!
        var output = mixBlock(mixer, frames: frames, [(idA, Array(a[..<frames])), (idB, Array(b[..<frames]))])
        mixer.removeStream(idB)
        #expect(mixer.activeStreams == 1)
        output += mixBlock(mixer, frames: frames, [(idA, Array(a[frames...])), (idB, Array(b[frames...]))])
        for i in 0..<frames { #expect(output[i] == a[i] + b[i]) }
        for i in frames..<frames * 2 { #expect(output[i] == a[i]) }
        // The removed id is stale, also once its slot is reused.
        #expect(!mixer.contains(idB) && mixer.ramp(of: idB) == nil)
        let idC = mixer.addStream(channels: 1)!
        #expect(idC.slot == idB.slot && idC != idB)
        mixer.beginBlock(frames: frames)
        #expect(mixer.accumulate(idB, b, frames: frames) == 0)
        mixer.setGain(0, of: idB, overFrames: 0)
        #expect(mixer.ramp(of: idC)!.current == 1)
    }

    @Test func loudSumsAreLimited() {
        let mixer = StreamMixer(channels: 1, maxStreams: 4, maxFrames: 4)
        let full: [Float] = [0.8, -0.8, 1, -1]
        let ids = (0..<4).compactMap { _ in mixer.addStream(channels: 1) }
        let output = mixBlock(mixer, frames: 4, ids.map { ($0, full) })
        let limiter = SoftLimiter()
        #expect(output == [limiter(3.2), limiter(-3.2), limiter(4), limiter(-4)])
        #expect(output.allSatisfy { abs($0) < 1 })
    }

    /// A ring that wraps hands over a block in two parts; a short stream is silent after its end.
    @Test func partsAppendAndShortStreamsLeaveSilence() {
        let mixer = StreamMixer(channels: 2, maxStreams: 2, maxFrames: 8)
        let id = mixer.addStream(channels: 1)!
        let short = mixer.addStream(channels: 2)!
        let ramp: [Float] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
        mixer.beginBlock(frames: 8)
        #expect(mixer.accumulate(id, ramp, frames: 3) == 3)
        #expect(ramp.withUnsafeBufferPointer { mixer.accumulate(id, $0.baseAddress! + 3, frames: 10) } == 5)
        #expect(mixer.accumulate(id, ramp, frames: 1) == 0)  // the block is full for it
        #expect(mixer.accumulate(short, [0.05, 0.05, 0.05, 0.05], frames: 2) == 2)
        let out = Array(UnsafeBufferPointer(start: mixer.finishBlock(), count: 16))
        for frame in 0..<8 {
            let extra: Float = frame < 2 ? 0.05 : 0
            #expect(out[frame * 2] == ramp[frame] + extra && out[frame * 2 + 1] == ramp[frame] + extra)
        }
    }

    @Test func multichannelOnAMonoDeviceIsAveraged() {
        let mixer = StreamMixer(channels: 1, maxStreams: 1, maxFrames: 2)
        let id = mixer.addStream(channels: 2)!
        mixer.beginBlock(frames: 2)
        mixer.accumulate(id, [0.5, 0.25, -0.5, 0], frames: 2)
        #expect(Array(UnsafeBufferPointer(start: mixer.finishBlock(), count: 2)) == [0.375, -0.25])
    }

    /// Channel counts come from the file: nonsense is refused, not a trap.
    @Test func impossibleChannelCountsAreRefused() {
        let stereo = StreamMixer(channels: 2, maxStreams: 8, maxFrames: 8)
        for channels in [0, -1, 1025, Int.max, Int.min] {
            #expect(stereo.addStream(channels: channels) == nil, "\(channels)")
        }
        #expect(stereo.activeStreams == 0)
        for channels in [1, 2, 3, 6, 8] { #expect(stereo.addStream(channels: channels) != nil, "\(channels)") }
    }

    @Test func fivePointOneFoldsDownToStereoAtFullScale() {
        let mixer = StreamMixer(channels: 2, maxStreams: 1, maxFrames: 3)
        let id = mixer.addStream(channels: 6)!
        mixer.beginBlock(frames: 3)
        // FL only; C only (to both sides at -3 dB); every channel at full scale but LFE.
        mixer.accumulate(id, [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1], frames: 3)
        let out = Array(UnsafeBufferPointer(start: mixer.finishBlock(), count: 6))
        let norm = 1 / (1 + 2 * Float(0.5.squareRoot()))
        #expect(abs(out[0] - norm) < 1e-6 && out[1] == 0, "FL goes left only")
        #expect(abs(out[2] - out[3]) < 1e-7 && abs(out[2] - Float(0.5.squareRoot()) * norm) < 1e-6, "centre to both")
        #expect(
            out[4] <= 1 && out[4] > 0.95 && out[5] <= 1 && out[5] > 0.95,
            "full scale stays full scale (soft-limited): \(out)")
    }

    @Test func otherLayoutsGoChannelToChannel() {
        let mixer = StreamMixer(channels: 2, maxStreams: 1, maxFrames: 1)
        let id = mixer.addStream(channels: 3)!
        mixer.beginBlock(frames: 1)
        mixer.accumulate(id, [0.5, 0.25, 0.125], frames: 1)
        #expect(Array(UnsafeBufferPointer(start: mixer.finishBlock(), count: 2)) == [0.5, 0.25])
        let wide = StreamMixer(channels: 4, maxStreams: 1, maxFrames: 1)
        let stereo = wide.addStream(channels: 2)!
        wide.beginBlock(frames: 1)
        wide.accumulate(stereo, [0.5, 0.25], frames: 1)
        #expect(Array(UnsafeBufferPointer(start: wide.finishBlock(), count: 4)) == [0.5, 0.25, 0, 0])
    }

    /// The mixer cannot allocate what it never asks for: every buffer is made at init for
    /// fixed capacities, which never grow (more streams are refused, larger blocks trap).
    @Test func capacitiesAreFixedAtInit() {
        let mixer = StreamMixer(channels: 2, maxStreams: 3, maxFrames: 512)
        #expect(mixer.maxStreams == 3 && mixer.maxFrames == 512 && mixer.channels == 2)
        let ids = (0..<3).compactMap { _ in mixer.addStream(channels: 1) }
        #expect(ids.count == 3 && mixer.activeStreams == 3)
        #expect(mixer.addStream(channels: 2) == nil)
        mixer.removeStream(ids[1])
        mixer.removeStream(ids[1])  // twice is harmless
        #expect(mixer.activeStreams == 2)
        #expect(mixer.addStream(channels: 2) != nil)
        #expect(mixer.maxStreams == 3 && mixer.maxFrames == 512)
    }
}
