import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One clip on its way to the device: the ring the decode side fills, the
/// stages the playback thread applies, and the counters it publishes.
final class PlaybackJob: @unchecked Sendable {
    let ring: PCMRing
    let processor: FrameProcessor
    let output: any AudioOutput
    /// The playback thread sleeps here when the ring is empty; the decode side
    /// signals after each commit, at end of input and on stop.
    let dataAvailable = Wakeup()
    /// The decode side sleeps here until the ring is half empty or the job is done.
    let spaceAvailable = Wakeup()
    let endOfInput = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    let isDone = Atomic<Bool>(false)
    /// Written minus what the device still holds: what was heard.
    let framesPlayed = Atomic<Int>(0)
    /// Set by the playback thread before `isDone`; read only after it.
    private(set) var failure: OutputFailure?
    /// Frames between progress ticks; 0 when nobody watches progress.
    let progressStepFrames: Int
    /// Bumped by the playback thread every `progressStepFrames` written.
    let progressTicks = Atomic<Int>(0)

    init(ring: PCMRing, processor: FrameProcessor, output: any AudioOutput, progressStepFrames: Int) {
        self.ring = ring
        self.processor = processor
        self.output = output
        self.progressStepFrames = progressStepFrames
    }

    /// Decode side: sleeps until the ring has room for a good chunk, the job
    /// ended, or a progress tick passed `seenTicks`.
    func waitForSpace(seenTicks: Int) {
        spaceAvailable.wait { ring.isHalfEmpty || isDone.load(ordering: .acquiring)
            || progressTicks.load(ordering: .acquiring) != seenTicks }
    }

    /// Decode side: sleeps until the job is done or a progress tick passed `seenTicks`.
    func waitUntilDone(seenTicks: Int) {
        spaceAvailable.wait { isDone.load(ordering: .acquiring) || progressTicks.load(ordering: .acquiring) != seenTicks }
    }

    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        dataAvailable.signal()
        output.interrupt()
    }

    /// The playback thread's work for this job. Reads the ring, applies the
    /// stages, writes to the device and publishes counters; no allocation,
    /// no locks, no logging.
    fileprivate func render() {
        var written = 0
        var lastPending = Int.max
        // The first tick comes with the first write: watchers learn at once that it started.
        var nextTick = progressStepFrames > 0 ? 1 : 0
        while true {
            if stopRequested.load(ordering: .acquiring) {
                framesPlayed.store(max(0, written - output.delay()), ordering: .releasing)
                output.drop()
                break
            }
            let (source, available) = ring.readable()
            if available == 0 {
                if endOfInput.load(ordering: .acquiring) {
                    // The producer commits before it sets endOfInput: look once more.
                    if ring.readable().frames > 0 { continue }
                    // Sleep while the device plays out all but its last period, so a stop
                    // still cuts in at once; a device whose delay does not shrink is drained.
                    let pending = output.delay()
                    if pending > output.periodFrames, pending < lastPending {
                        lastPending = pending
                        framesPlayed.store(max(0, written - pending), ordering: .releasing)
                        output.waitForInterrupt(milliseconds: max(1, (pending - output.periodFrames) * 1000 / output.format.sampleRate))
                        continue
                    }
                    do { try output.drain() } catch { failure = error }
                    framesPlayed.store(written, ordering: .releasing)
                    break
                }
                // Wait for half a ring, not a chunk: decoding that much takes well under
                // a millisecond, and on an unpaced device it saves thousands of wake-ups.
                dataAvailable.wait { !ring.isHalfEmpty || endOfInput.load(ordering: .acquiring)
                    || stopRequested.load(ordering: .acquiring) }
                continue
            }
            do {
                let room = try output.writableFrames()
                if room == 0 {
                    try output.waitUntilWritable()
                    continue
                }
                let frames = min(available, room, processor.maxFrames)
                // Fewer taken only after a recovered xrun; the rest goes next time round.
                let taken = try output.write(processor.process(source, frames: frames), frames: frames)
                ring.commitRead(taken)
                written += taken
            } catch {
                failure = error
                framesPlayed.store(max(0, written - output.delay()), ordering: .releasing)
                break
            }
            framesPlayed.store(max(0, written - output.delay()), ordering: .releasing)
            if progressStepFrames > 0, written >= nextTick {
                nextTick = (written / progressStepFrames + 1) * progressStepFrames
                progressTicks.add(1, ordering: .releasing)
                spaceAvailable.signal()
            } else if ring.isHalfEmpty {
                spaceAvailable.signal()
            }
        }
        isDone.store(true, ordering: .releasing)
        spaceAvailable.signal()
    }
}

/// The dedicated thread that feeds the device. It sleeps on a semaphore
/// between jobs and runs one job at a time.
final class PlaybackThread: @unchecked Sendable {
    private let wake = Semaphore()
    private let pending = Mutex<PlaybackJob?>(nil)
    private let shuttingDown = Atomic<Bool>(false)
    private var thread = pthread_t()

    init() {
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            let me = Unmanaged<PlaybackThread>.fromOpaque(context!).takeRetainedValue()
            me.run()
            return nil
        }, context)
        precondition(status == 0, "cannot start the playback thread: \(systemErrorMessage(status))")
    }

    func submit(_ job: PlaybackJob) {
        pending.withLock { $0 = job }
        wake.signal()
    }

    /// Ends the thread after its current job; waits for it.
    func shutdown() {
        shuttingDown.store(true, ordering: .releasing)
        wake.signal()
        pthread_join(thread, nil)
    }

    private func run() {
        while true {
            wake.wait()
            if shuttingDown.load(ordering: .acquiring) { return }
            guard let job = pending.withLock({ slot in defer { slot = nil }; return slot }) else { continue }
            job.render()
        }
    }
}
