import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

@Suite struct FrameProcessorTests {
    private func process<In, Out>(
        _ input: [In], as inFormat: SampleFormat, to outFormat: SampleFormat, channels: Int = 1,
        outChannels: Int? = nil, gain: Float = 1, pan: Float = 0, _: Out.Type
    ) -> [Out] {
        let output = OutputFormat(sampleFormat: outFormat, sampleRate: 48_000, channels: outChannels ?? channels)
        let frames = input.count / channels
        let processor = FrameProcessor(
            input: inFormat, inputChannels: channels, output: output, maxFrames: frames, gain: gain, pan: pan)
        return input.withUnsafeBytes { raw in
            let result = processor.process(raw.baseAddress!, frames: frames)
            return Array(
                UnsafeBufferPointer(start: result.assumingMemoryBound(to: Out.self), count: frames * output.channels))
        }
    }

    @Test func passthroughOnlyAtUnityWithMatchingLayout() {
        let format = OutputFormat(sampleFormat: .int16, sampleRate: 48_000, channels: 2)
        #expect(
            FrameProcessor(input: .int16, inputChannels: 2, output: format, maxFrames: 8, gain: 1, pan: 0).isPassthrough
        )
        #expect(
            !FrameProcessor(input: .int16, inputChannels: 2, output: format, maxFrames: 8, gain: 0.9, pan: 0)
                .isPassthrough)
        #expect(
            !FrameProcessor(input: .int16, inputChannels: 2, output: format, maxFrames: 8, gain: 1, pan: 0.1)
                .isPassthrough)
        #expect(
            !FrameProcessor(input: .float32, inputChannels: 2, output: format, maxFrames: 8, gain: 1, pan: 0)
                .isPassthrough)
        #expect(
            !FrameProcessor(input: .int16, inputChannels: 1, output: format, maxFrames: 8, gain: 1, pan: 0)
                .isPassthrough)
    }

    @Test func floatToIntegerClipsInsteadOfWrapping() {
        let loud: [Float] = [1.5, -1.5, 1.0, -1.0, 0.5, 0]
        #expect(process(loud, as: .float32, to: .int16, Int16.self) == [32_767, -32_768, 32_767, -32_768, 16_384, 0])
        #expect(
            process(loud, as: .float32, to: .int32, Int32.self)
                == [2_147_483_520, -2_147_483_648, 2_147_483_520, -2_147_483_648, 1_073_741_824, 0])
    }

    @Test func gainAboveUnityClipsAtFullScale() {
        let input: [Int16] = [20_000, -20_000, 100]
        #expect(process(input, as: .int16, to: .int16, gain: 2, Int16.self) == [32_767, -32_768, 200])
    }

    @Test func twentyFourBitInInt32SurvivesFloat() {
        // A 24-bit sample left-justified in int32 round-trips exactly through float.
        let input: [Int32] = [0x7FFF_FF00, -0x8000_0000, 0x0000_0100, -0x0000_0100]
        let viaFloat = process(input, as: .int32, to: .float32, Float.self)
        #expect(process(viaFloat, as: .float32, to: .int32, Int32.self) == input)
    }

    @Test func panIsABalanceOnStereo() {
        let input: [Int16] = [10_000, 10_000]
        #expect(process(input, as: .int16, to: .int16, channels: 2, pan: 1, Int16.self) == [0, 10_000])
        #expect(process(input, as: .int16, to: .int16, channels: 2, pan: -0.25, Int16.self) == [10_000, 7_500])
    }
}
