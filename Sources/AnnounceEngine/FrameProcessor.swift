import AnnounceModel
import AnnounceOutput
import AnnounceSystem

/// Turns ring frames into device frames: per-channel gain (volume and pan),
/// mono to stereo, and sample format conversion with clipping. Stateless, so a
/// block can be processed again after a partial write. All buffers are
/// made up front; `process` runs on the playback thread and never allocates.
final class FrameProcessor {
    let input: SampleFormat
    let inputChannels: Int
    let output: OutputFormat
    let maxFrames: Int
    /// Gain for each output channel.
    private let gains: UnsafeMutableBufferPointer<Float>
    private let scratch: UnsafeMutableRawPointer
    /// Same layout, unity gain: ring frames go to the device untouched.
    let isPassthrough: Bool

    init(input: SampleFormat, inputChannels: Int, output: OutputFormat, maxFrames: Int, gain: Float = 1, pan: Float = 0)
    {
        self.input = input
        self.inputChannels = inputChannels
        self.output = output
        self.maxFrames = maxFrames
        gains = .allocate(capacity: output.channels)
        gains.initialize(repeating: gain)
        if output.channels == 2 {
            // Balance: the far side is attenuated, the near side stays at full gain.
            gains[0] = gain * (pan > 0 ? 1 - pan : 1)
            gains[1] = gain * (pan < 0 ? 1 + pan : 1)
        }
        scratch = .allocate(byteCount: maxFrames * output.bytesPerFrame, alignment: 16)
        isPassthrough = input == output.sampleFormat && inputChannels == output.channels && gains.allSatisfy { $0 == 1 }
    }

    deinit {
        gains.deallocate()
        scratch.deallocate()
    }

    /// Frames ready for the device: `source` itself on passthrough, else the scratch buffer.
    func process(_ source: UnsafeRawPointer, frames: Int) -> UnsafeRawPointer {
        if isPassthrough { return source }
        precondition(frames <= maxFrames)
        switch input {
        case .float32: convert(source.assumingMemoryBound(to: Float.self), frames: frames) { $0 }
        case .int32:
            convert(source.assumingMemoryBound(to: Int32.self), frames: frames) { Float($0) * (1 / 2_147_483_648) }
        case .int16: convert(source.assumingMemoryBound(to: Int16.self), frames: frames) { Float($0) * (1 / 32_768) }
        }
        return UnsafeRawPointer(scratch)
    }

    @inline(__always)
    private func convert<Sample>(_ source: UnsafePointer<Sample>, frames: Int, toFloat: (Sample) -> Float) {
        switch output.sampleFormat {
        case .float32:
            render(source, frames: frames, toFloat: toFloat, into: scratch.assumingMemoryBound(to: Float.self)) { $0 }
        case .int32:
            render(source, frames: frames, toFloat: toFloat, into: scratch.assumingMemoryBound(to: Int32.self)) {
                // 2^31 is not representable; clip just below it.
                Int32(max(-2_147_483_648, min(2_147_483_520, ($0 * 2_147_483_648).rounded())))
            }
        case .int16:
            render(source, frames: frames, toFloat: toFloat, into: scratch.assumingMemoryBound(to: Int16.self)) {
                Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded())))
            }
        }
    }

    @inline(__always)
    private func render<Sample, Out>(
        _ source: UnsafePointer<Sample>, frames: Int, toFloat: (Sample) -> Float,
        into destination: UnsafeMutablePointer<Out>, fromFloat: (Float) -> Out
    ) {
        let outChannels = output.channels
        let inChannels = inputChannels
        let gains = self.gains.baseAddress!
        for frame in 0..<frames {
            let inBase = frame * inChannels
            let outBase = frame * outChannels
            for channel in 0..<outChannels {
                // Mono input feeds every output channel.
                let sample = toFloat(source[inBase + (inChannels == 1 ? 0 : channel)])
                destination[outBase + channel] = fromFloat(sample * gains[channel])
            }
        }
    }
}
