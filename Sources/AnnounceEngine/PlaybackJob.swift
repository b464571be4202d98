import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import Synchronization

/// An open device as the playback thread uses it: the output, the mixer for
/// its format and the device's timeline. Made by the decode side when the
/// device opens; after that only the playback thread touches it.
final class OpenDevice: @unchecked Sendable {
    let output: any AudioOutput
    /// Frames per mixed block: the device's buffer, so one block can fill it.
    let blockFrames: Int
    let mixer: StreamMixer
    /// The float bus → the device's sample format.
    let busProcessor: FrameProcessor
    /// Frames written since the device opened (playback thread only).
    var written = 0
    /// A period of zeros when the device is kept open (`keep-open`): the playback thread feeds
    /// it once nothing plays, until the decode side closes the device.
    let silence: UnsafeMutableRawPointer?

    /// Streams mixed at once on one device; more are refused (69).
    static let maxStreams = 32

    init(output: any AudioOutput, keptOpen: Bool = false) {
        self.output = output
        blockFrames = max(output.bufferFrames, output.periodFrames, 1)
        let format = output.format
        mixer = StreamMixer(channels: format.channels, maxStreams: Self.maxStreams, maxFrames: blockFrames)
        busProcessor = FrameProcessor(
            input: .float32, inputChannels: format.channels, output: format, maxFrames: blockFrames)
        silence =
            keptOpen
            ? UnsafeMutableRawPointer.allocate(
                byteCount: max(output.periodFrames, 1) * format.bytesPerFrame, alignment: 16) : nil
        silence?.initializeMemory(
            as: UInt8.self, repeating: 0, count: max(output.periodFrames, 1) * format.bytesPerFrame)
    }

    deinit { silence?.deallocate() }
}

/// One stream on its way to the device: the ring the decode side fills, the
/// stages the playback thread applies, and the counters it publishes.
final class PlaybackJob: @unchecked Sendable {
    let ring: PCMRing
    let device: OpenDevice
    /// Ring frames → device frames, for a stream playing alone at unity mixer gain.
    let directProcessor: FrameProcessor
    /// The direct path keeps the stream's sound (a stereo stream on a mono device must be mixed down).
    let playsDirect: Bool
    /// Ring frames → float frames of `mixChannels` channels, for the mixer.
    let mixProcessor: FrameProcessor
    let mixChannels: Int
    /// The decode side sleeps here until the ring is half empty or the job is done.
    let spaceAvailable = Wakeup()
    let endOfInput = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    let isDone = Atomic<Bool>(false)
    /// The playback thread waits for this stream's frames: the decode side interrupts its wait.
    let wantsData = Atomic<Bool>(false)
    /// Frames of this stream heard (written to the device minus what it still holds).
    let framesPlayed = Atomic<Int>(0)
    /// Set by the playback thread before `isDone`; read only after it.
    var failure: OutputFailure?
    /// A stop ended it before all of it was heard (set and read as `failure`): a stop that comes
    /// once every frame of it was played, or is playing under other streams, does not.
    var endedByStop = false
    /// Frames between progress ticks; 0 when nobody watches progress. Any thread may change it.
    let progressStepFrames: Atomic<Int>
    /// Bumped by the playback thread every `progressStepFrames` written, at most as often in wall time.
    let progressTicks = Atomic<Int>(0)
    /// The mixer gain asked for: Float bits << 32 | ramp frames. Any thread writes, the playback thread applies.
    private let gainRequest: Atomic<UInt64>
    /// Frames of the fade from silence when the stream starts (a resumed clip).
    let fadeInFrames: Int
    /// Frames of it before the fade begins: the wake-up silence, which it does not fade over.
    let fadeInAfter: Int

    // Playback thread only.
    var mixID: StreamMixer.StreamID?
    /// Frames of this stream written to the device.
    var mixed = 0
    /// The device position just after its latest frame.
    var lastEnd = 0
    /// Every frame of it has been written; it is done once the device has played them.
    var inputEnded = false
    /// Stopped while others play: ramping to silence, then done.
    var fadingOut = false
    /// Its ring was empty when this mixing cycle looked: a wait for data is a wait for it.
    var emptyAtLook = false
    /// Silent until `fadeInAfter` frames are mixed, then fading in.
    var fadeWaiting = false
    var appliedGainRequest: UInt64 = 0
    var nextTick = 0
    /// The step `nextTick` was counted in.
    var tickStep = 0
    /// Monotonic nanoseconds before which no further tick comes: progress is never reported
    /// faster than in real time (an unpaced device plays ten minutes in a few milliseconds).
    var nextTickTime: UInt64 = 0

    /// Its source arrives while it is read (a download): a gap in it may come at any time.
    let arrivesWhileRead: Bool
    /// Frames in the ring that are worth waking a playback thread that waits for them: half the
    /// ring (decoding that much takes well under a millisecond, and on an unpaced device it saves
    /// thousands of wake-ups), but a device buffer for a source that arrives while read (a slow
    /// download may never fill half the ring, and would then play only at its end).
    let wakeFrames: Int

    init(
        ring: PCMRing, device: OpenDevice, directProcessor: FrameProcessor, playsDirect: Bool,
        mixProcessor: FrameProcessor, mixChannels: Int, progressStepFrames: Int, gain: Float, fadeInFrames: Int,
        fadeInAfter: Int = 0, arrivesWhileRead: Bool = false
    ) {
        self.fadeInAfter = fadeInAfter
        self.arrivesWhileRead = arrivesWhileRead
        wakeFrames =
            arrivesWhileRead
            ? min(ring.capacityFrames / 2 + 1, device.output.bufferFrames) : ring.capacityFrames / 2 + 1
        self.ring = ring
        self.device = device
        self.directProcessor = directProcessor
        self.playsDirect = playsDirect
        self.mixProcessor = mixProcessor
        self.mixChannels = mixChannels
        self.progressStepFrames = Atomic(progressStepFrames)
        gainRequest = Atomic(Self.pack(gain, rampFrames: 0))
        self.fadeInFrames = fadeInFrames
    }

    static func pack(_ gain: Float, rampFrames: Int) -> UInt64 {
        UInt64(gain.bitPattern) << 32 | UInt64(UInt32(clamping: max(0, rampFrames)))
    }

    static func unpack(_ request: UInt64) -> (gain: Float, rampFrames: Int) {
        (Float(bitPattern: UInt32(truncatingIfNeeded: request >> 32)), Int(UInt32(truncatingIfNeeded: request)))
    }

    var requestedGain: UInt64 { gainRequest.load(ordering: .acquiring) }

    /// Ramps the stream's mixer gain (ducking) to `gain` over `rampFrames`. Any thread.
    func setGain(_ gain: Float, rampFrames: Int) {
        gainRequest.store(Self.pack(gain, rampFrames: rampFrames), ordering: .releasing)
        device.output.interrupt()
    }

    /// Decode side: sleeps until the ring has room for a good chunk, the job
    /// ended, or a progress tick passed `seenTicks`.
    func waitForSpace(seenTicks: Int) {
        spaceAvailable.wait {
            ring.isHalfEmpty || isDone.load(ordering: .acquiring)
                || progressTicks.load(ordering: .acquiring) != seenTicks
        }
    }

    /// Decode side: sleeps until the job is done or a progress tick passed `seenTicks`.
    func waitUntilDone(seenTicks: Int) {
        spaceAvailable.wait {
            isDone.load(ordering: .acquiring) || progressTicks.load(ordering: .acquiring) != seenTicks
        }
    }

    /// A playback thread waiting for this stream has reason to wake: `wakeFrames` in the ring,
    /// or the input ended. The one rule for both sides of the wait.
    var hasDataToWake: Bool {
        ring.filledFrames >= wakeFrames || endOfInput.load(ordering: .acquiring)
    }

    /// Decode side, after committing frames or ending the input: wakes a
    /// playback thread that waits for them, once there is a good chunk (`hasDataToWake`).
    func notifyData() {
        guard hasDataToWake else { return }
        atomicMemoryFence(ordering: .sequentiallyConsistent)  // pairs with the playback thread's, around wantsData
        if wantsData.load(ordering: .relaxed), wantsData.exchange(false, ordering: .acquiringAndReleasing) {
            device.output.interrupt()
        }
    }

    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        device.output.interrupt()
    }

    /// Frames heard of this stream when the device holds `pending` frames (playback thread).
    func heard(pending: Int) -> Int {
        let played = device.written - pending
        return mixed - min(mixed, max(0, lastEnd - played))
    }

    /// Playback thread: the last thing it does with the job.
    func finish(heard: Int, failure: OutputFailure? = nil, stopped: Bool = false) {
        self.failure = failure
        endedByStop = stopped
        framesPlayed.store(heard, ordering: .releasing)
        isDone.store(true, ordering: .releasing)
        spaceAvailable.signal()
    }
}
