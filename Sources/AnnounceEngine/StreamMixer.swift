import AnnounceModel
import AnnounceOutput
import AnnounceSystem

/// Sums float interleaved streams, each with its own `GainRamp`, into one bus
/// of the device's channel count, then bends the sum with a `SoftLimiter`.
///
/// Capacity (streams, frames per block) is fixed at init and every buffer is
/// made there: `addStream`, `removeStream`, `setGain`, `beginBlock`,
/// `accumulate` and `finishBlock` never allocate, lock or log, so all of
/// them may run on the playback thread. The type is not thread-safe: call it
/// from one thread (the playback thread), handing it commands lock-free.
///
/// Layouts: a mono stream goes to every channel at full level; a stream with
/// the device's channel count goes channel to channel; a multichannel stream
/// on a mono device is averaged; 5.1 (WAV order FL FR FC LFE BL BR) on a stereo
/// device is folded down as ITU-R BS.775 does (centre and surrounds at −3 dB, LFE
/// left out, normalised so full scale stays full scale); any other layout goes
/// channel to channel, extra channels dropped and missing ones silent. Rates must already
/// match the device.
///
/// One block:
///
///     mixer.beginBlock(frames: n)                 // bus = silence
///     mixer.accumulate(a, ringA, frames: n)        // += a · gain ramp of a
///     mixer.accumulate(b, ringB1, frames: k)       // a ring that wraps:
///     mixer.accumulate(b, ringB2, frames: n - k)   // appended after b's first part
///     let out = mixer.finishBlock()                // limited, n·channels floats
final class StreamMixer {
    /// A stream's handle; stale once the stream is removed (its slot may be reused).
    struct StreamID: Hashable, Sendable {
        let slot: Int
        let generation: UInt32
    }

    private struct Slot {
        var generation: UInt32 = 0
        var isActive = false
        var channels = 0
        var ramp = GainRamp()
        /// Frames this stream has added to the current block.
        var filled = 0
    }

    let channels: Int
    let maxStreams: Int
    let maxFrames: Int
    let limiter: SoftLimiter
    private let slots: UnsafeMutablePointer<Slot>
    private let bus: UnsafeMutablePointer<Float>
    /// Frames in the block being mixed (or last mixed).
    private(set) var blockFrames = 0

    init(channels: Int, maxStreams: Int, maxFrames: Int, limiter: SoftLimiter = SoftLimiter()) {
        precondition(channels > 0 && maxStreams > 0 && maxFrames > 0)
        self.channels = channels
        self.maxStreams = maxStreams
        self.maxFrames = maxFrames
        self.limiter = limiter
        slots = .allocate(capacity: maxStreams)
        slots.initialize(repeating: Slot(), count: maxStreams)
        bus = .allocate(capacity: maxFrames * channels)
        bus.initialize(repeating: 0, count: maxFrames * channels)
    }

    deinit {
        slots.deinitialize(count: maxStreams)
        slots.deallocate()
        bus.deallocate()
    }

    // MARK: Streams

    /// Every stream with at least one channel has a mapping (see the type's comment).
    static func canMix(channels: Int, onto deviceChannels: Int) -> Bool {
        channels > 0 && channels <= Limits.maxChannels && deviceChannels > 0
    }

    var activeStreams: Int { (0..<maxStreams).count { slots[$0].isActive } }

    /// A new stream of `channels` interleaved channels at `gain` (use 0 and then
    /// `setGain` to fade it in); nil when the layout cannot be mixed (the channel
    /// count comes from the file) or all `maxStreams` slots are taken.
    func addStream(channels streamChannels: Int, gain: Float = 1) -> StreamID? {
        guard Self.canMix(channels: streamChannels, onto: channels) else { return nil }
        for index in 0..<maxStreams where !slots[index].isActive {
            slots[index].generation &+= 1
            slots[index].isActive = true
            slots[index].channels = streamChannels
            slots[index].ramp = GainRamp(gain: gain)
            slots[index].filled = blockFrames  // joining mid-block adds nothing to it
            return StreamID(slot: index, generation: slots[index].generation)
        }
        return nil
    }

    /// Drops the stream at once. To avoid a click, ramp it to 0 first and remove
    /// it once `ramp(of:)?.isSettled`.
    func removeStream(_ id: StreamID) {
        guard contains(id) else { return }
        slots[id.slot].isActive = false
    }

    func contains(_ id: StreamID) -> Bool {
        id.slot >= 0 && id.slot < maxStreams && slots[id.slot].isActive && slots[id.slot].generation == id.generation
    }

    /// Ramps the stream's gain to `gain` over `overFrames` from wherever it is now.
    func setGain(_ gain: Float, of id: StreamID, overFrames: Int) {
        guard contains(id) else { return }
        slots[id.slot].ramp.setTarget(gain, overFrames: overFrames)
    }

    /// The stream's gain state; nil for a stale id.
    func ramp(of id: StreamID) -> GainRamp? {
        contains(id) ? slots[id.slot].ramp : nil
    }

    // MARK: Mixing

    /// Starts a block of `frames` (≤ `maxFrames`): the bus is silence.
    func beginBlock(frames: Int) {
        precondition(frames >= 0 && frames <= maxFrames, "block of \(frames) frames exceeds the mixer's \(maxFrames)")
        blockFrames = frames
        bus.update(repeating: 0, count: frames * channels)
        for index in 0..<maxStreams { slots[index].filled = 0 }
    }

    /// Adds up to `frames` frames of the stream to the block, after what it already
    /// added this block, through its gain ramp (which advances by as many frames).
    /// Returns the frames taken: fewer when the block is full, 0 for a stale id.
    /// A stream that adds fewer frames than the block is silent for the rest.
    @discardableResult
    func accumulate(_ id: StreamID, _ samples: UnsafePointer<Float>, frames: Int) -> Int {
        guard contains(id) else { return 0 }
        let slot = slots + id.slot
        let offset = slot.pointee.filled
        let count = min(frames, blockFrames - offset)
        guard count > 0 else { return 0 }
        slot.pointee.filled = offset + count
        let outChannels = channels
        let out = bus + offset * outChannels
        let inChannels = slot.pointee.channels
        if slot.pointee.ramp.isSettled && slot.pointee.ramp.current == 0 {
            return count  // silent: nothing to add, nothing to advance
        }
        if inChannels == outChannels {
            slot.pointee.ramp.forEachFrame(count) { frame, gain in
                let source = samples + frame * inChannels
                let destination = out + frame * outChannels
                for channel in 0..<outChannels { destination[channel] += source[channel] * gain }
            }
        } else if inChannels == 1 {
            // Mono goes to every channel.
            slot.pointee.ramp.forEachFrame(count) { frame, gain in
                let sample = samples[frame] * gain
                let destination = out + frame * outChannels
                for channel in 0..<outChannels { destination[channel] += sample }
            }
        } else if outChannels == 1 {
            // Several channels onto a mono device: their mean.
            let scale = 1 / Float(inChannels)
            slot.pointee.ramp.forEachFrame(count) { frame, gain in
                let source = samples + frame * inChannels
                var sum: Float = 0
                for channel in 0..<inChannels { sum += source[channel] }
                out[frame] += sum * scale * gain
            }
        } else if inChannels == 6 && outChannels == 2 {
            // 5.1 folded down to stereo.
            let side = Float(0.5.squareRoot())
            let norm = 1 / (1 + 2 * side)
            slot.pointee.ramp.forEachFrame(count) { frame, gain in
                let source = samples + frame * 6
                let centre = source[2] * side
                out[frame * 2] += (source[0] + centre + source[4] * side) * norm * gain
                out[frame * 2 + 1] += (source[1] + centre + source[5] * side) * norm * gain
            }
        } else {
            // Channel to channel: extra channels dropped, missing ones silent.
            let shared = min(inChannels, outChannels)
            slot.pointee.ramp.forEachFrame(count) { frame, gain in
                let source = samples + frame * inChannels
                let destination = out + frame * outChannels
                for channel in 0..<shared { destination[channel] += source[channel] * gain }
            }
        }
        return count
    }

    /// Ends the block: limits the bus and returns it, `blockFrames · channels`
    /// interleaved floats, valid until the next `beginBlock`.
    func finishBlock() -> UnsafePointer<Float> {
        limiter.process(bus, count: blockFrames * channels)
        return UnsafePointer(bus)
    }
}
