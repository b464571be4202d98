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
    /// Posted by the decode side after each commit and at end of input or stop.
    let dataAvailable = Semaphore()
    /// Posted by the playback thread after each period it takes, and once when done.
    let spaceAvailable = Semaphore()
    let endOfInput = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    let isDone = Atomic<Bool>(false)
    let framesWritten = Atomic<Int>(0)
    /// Written minus what the device still holds: what was heard.
    let framesPlayed = Atomic<Int>(0)
    /// Set by the playback thread before `isDone`; read only after it.
    private(set) var failure: OutputFailure?

    init(ring: PCMRing, processor: FrameProcessor, output: any AudioOutput) {
        self.ring = ring
        self.processor = processor
        self.output = output
    }

    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        dataAvailable.signal()
    }

    /// The playback thread's work for this job. Reads the ring, applies the
    /// stages, writes to the device and publishes counters; no allocation,
    /// no locks, no logging.
    fileprivate func render() {
        var written = 0
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
                    do { try output.drain() } catch { failure = error }
                    framesPlayed.store(written, ordering: .releasing)
                    break
                }
                dataAvailable.wait()
                continue
            }
            let frames = min(available, processor.maxFrames)
            do {
                try output.write(processor.process(source, frames: frames), frames: frames)
            } catch {
                failure = error
                framesPlayed.store(max(0, written - output.delay()), ordering: .releasing)
                break
            }
            ring.commitRead(frames)
            written += frames
            framesWritten.store(written, ordering: .releasing)
            framesPlayed.store(max(0, written - output.delay()), ordering: .releasing)
            spaceAvailable.signal()
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
