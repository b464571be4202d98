import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import CPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The dedicated thread that feeds one device. It mixes every stream
/// submitted to it; a stream alone at unity mixer gain goes to the device
/// without the mixer, sample-exact. It never decodes, allocates, logs or
/// locks: streams arrive through slots and a bit mask, requests through
/// atomics, and every wait is on the device or its interrupt descriptor.
final class PlaybackThread: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<PlaybackJob?>
    /// Per slot: posted once this thread holds no reference to the slot's finished job, so the
    /// decode side drops the last one (a job's deinit frees its ring: never here).
    private let released: [CountingSemaphore]
    /// Slots filled by `submit` and not yet adopted.
    private let submitted = Atomic<UInt64>(0)
    private let wake = Wakeup()
    private let shuttingDown = Atomic<Bool>(false)
    private var thread = pthread_t()

    // Playback thread only.
    /// Slots whose jobs this thread plays.
    private var owned: UInt64 = 0
    /// Slots whose jobs are done but still referenced here, let go at the next point where
    /// no job reference is alive on this thread's stack.
    private var retiring: UInt64 = 0
    /// The device's delay at the last sleep before a drain; a delay that stops shrinking is drained.
    private var lastPending = Int.max
    private var lastWaitInterrupted = false
    /// Feeds a device kept open between streams (`keep-open`).
    private let keptOpen = KeptOpenDevice()

    /// A stopped stream that others play over fades out this long, not to click.
    static let stopFadeSeconds = 0.010

    init() {
        slots = .allocate(capacity: OpenDevice.maxStreams)
        slots.initialize(repeating: nil, count: OpenDevice.maxStreams)
        released = (0..<OpenDevice.maxStreams).map { _ in CountingSemaphore() }
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { context in
                let me = Unmanaged<PlaybackThread>.fromOpaque(context!).takeRetainedValue()
                me.run()
                return nil
            }, context)
        precondition(status == 0, "cannot start the playback thread: \(systemErrorMessage(status))")
    }

    deinit {
        slots.deinitialize(count: OpenDevice.maxStreams)
        slots.deallocate()
    }

    /// Hands `job` to the thread in `slot`, which the caller owns until the job is done.
    func submit(_ job: PlaybackJob, slot: Int) {
        slots[slot] = job
        submitted.bitwiseOr(1 << UInt64(slot), ordering: .releasing)
        wake.signal()
        job.device.output.interrupt()
    }

    /// Decode side, once `slot`'s job is done: returns when this thread has let go of it, so the
    /// caller's reference is the last.
    func waitUntilReleased(slot: Int) {
        released[slot].wait()
    }

    /// Decode side, before it closes or reopens `device`: returns once the thread no longer
    /// feeds it silence.
    func letGo(_ device: OpenDevice) {
        keptOpen.letGo(device, wake: wake)
    }

    /// Ends the thread once it has no jobs; waits for it.
    func shutdown() {
        shuttingDown.store(true, ordering: .releasing)
        wake.signal()
        pthread_join(thread, nil)
    }

    private func run() {
        announce_name_this_thread("announce-out")
        while true {
            let incoming = submitted.exchange(0, ordering: .acquiring)
            if incoming != 0 { adopt(incoming) }
            keptOpen.answer()
            retire()  // also a job `adopt` could not mix, before the idle wait below
            if owned == 0 {
                if shuttingDown.load(ordering: .acquiring) { return }
                if let device = keptOpen.toFeed {
                    keptOpen.feed(device, ahead: device.output.delay())
                    continue
                }
                wake.wait {
                    submitted.load(ordering: .acquiring) != 0 || shuttingDown.load(ordering: .acquiring)
                        || keptOpen.isAsked
                }
                continue
            }
            // Every job shares the device: the decode side reopens only when none plays.
            let device = slots[owned.trailingZeroBitCount]!.device
            cycle(device)
        }
    }

    /// Lets go of finished jobs. Called only where no job reference lives on this thread's stack,
    /// so none of these releases is the last: the decode side holds each job until it is told.
    /// Every `finish` is followed by one of these before any wait that may last (a decode side
    /// waiting on a job whose device stalls would otherwise wait with it).
    private func retire() {
        while retiring != 0 {
            let slot = retiring.trailingZeroBitCount
            retiring &= retiring - 1
            slots[slot] = nil
            released[slot].signal()
        }
    }

    @inline(__always)
    func forEachJob(_ body: (Int, PlaybackJob) -> Void) {
        var mask = owned
        while mask != 0 {
            let slot = mask.trailingZeroBitCount
            mask &= mask - 1
            body(slot, slots[slot]!)
        }
    }

    private func adopt(_ incoming: UInt64) {
        var mask = incoming
        while mask != 0 {
            let slot = mask.trailingZeroBitCount
            mask &= mask - 1
            let job = slots[slot]!
            owned |= 1 << UInt64(slot)
            keptOpen.adopt(job.device)
            let request = job.requestedGain
            let gain = PlaybackJob.unpack(request).gain
            job.appliedGainRequest = request
            job.tickStep = job.progressStepFrames.load(ordering: .relaxed)
            job.nextTick = job.tickStep > 0 ? 1 : 0  // the first tick comes with the first write
            guard let id = job.device.mixer.addStream(channels: job.mixChannels, gain: job.fadeInFrames > 0 ? 0 : gain)
            else {
                // The decode side checked the layout and there are as many mixer slots as job slots.
                finish(slot, job, heard: 0, failure: OutputFailure(code: EINVAL, operation: "mix"))
                continue
            }
            job.mixID = id
            if job.fadeInFrames > 0 && job.fadeInAfter > 0 {
                job.fadeWaiting = true
            } else if job.fadeInFrames > 0 {
                job.device.mixer.setGain(gain, of: id, overFrames: job.fadeInFrames)
            }
        }
        lastPending = .max
    }

    func finish(_ slot: Int, _ job: PlaybackJob, heard: Int, failure: OutputFailure? = nil, stopped: Bool = false) {
        if let id = job.mixID { job.device.mixer.removeStream(id) }
        owned &= ~(1 << UInt64(slot))
        retiring |= 1 << UInt64(slot)  // the slot keeps its reference until `retire`
        // A stream heard to its last frame was not stopped, whatever asked: the stop lost the race to its end.
        job.finish(heard: heard, failure: failure, stopped: stopped && !(job.inputEnded && heard >= job.mixed))
    }

    /// One step: apply stops and gains, retire streams heard to the end, then
    /// write one block or sleep until the device or a stream needs us.
    private func cycle(_ device: OpenDevice) {
        let output = device.output
        do {
            applyRequests(device)
            retire()  // stops it finished are told now, not after this cycle's wait
            guard owned != 0 else { return }
            var live = 0
            var tails = 0
            forEachJob { _, job in if job.inputEnded { tails += 1 } else { live += 1 } }
            // The device's delay only when a stream's tail is waiting to be heard: through a
            // sound server's plugin every query costs its threads a wake-up.
            let pending = tails > 0 ? output.delay() : 0
            if live > 0 {
                // Streams that ended under others are done once the device has played them.
                let played = device.written - pending
                forEachJob { slot, job in
                    if job.inputEnded && job.lastEnd <= played { finish(slot, job, heard: job.mixed) }
                }
                retire()  // before this cycle's write and wait: their plays end now, not a period later
            } else if device.silence != nil {
                // Kept open: silence follows the tails, each done once the device has played it.
                let played = device.written - pending
                forEachJob { slot, job in
                    if job.lastEnd <= played { finish(slot, job, heard: job.mixed) }
                }
                retire()
                if owned != 0 { keptOpen.feed(device, ahead: pending) }
                return
            } else {
                // Only tails are left: sleep while the device plays all but its last period,
                // so a stop or a new stream still cuts in; a delay that does not shrink is drained.
                // (A wait cut short by an interrupt, e.g. a gain change, says nothing about the delay.)
                if pending > output.periodFrames, pending < lastPending || lastWaitInterrupted {
                    lastPending = pending
                    publish(device, pending: pending)
                    lastWaitInterrupted = output.waitForInterrupt(
                        milliseconds: max(1, (pending - output.periodFrames) * 1000 / output.format.sampleRate))
                    return
                }
                try output.drain()
                lastPending = .max
                forEachJob { slot, job in finish(slot, job, heard: job.mixed) }
                return
            }
            lastPending = .max
            let room = try output.writableFrames()
            if room == 0 {
                try output.waitUntilWritable()
                return
            }
            if owned.nonzeroBitCount == 1, let job = slots[owned.trailingZeroBitCount], job.playsDirect, !job.fadingOut,
                let id = job.mixID, let ramp = device.mixer.ramp(of: id), ramp.isSettled, ramp.current == 1
            {
                try writeAlone(job, device, room: room)
            } else {
                try mix(device, room: room)
            }
        } catch {
            // The device is gone and so is its delay (a dead connection reports none): what was
            // heard is what the last good write published. A few frames may be heard twice on
            // resuming; none is skipped.
            forEachJob { slot, job in
                finish(slot, job, heard: job.framesPlayed.load(ordering: .relaxed), failure: error)
            }
        }
    }

    /// Stops and gain changes asked for since the last cycle.
    private func applyRequests(_ device: OpenDevice) {
        var stopping = 0
        var others = 0
        forEachJob { _, job in
            if job.stopRequested.load(ordering: .acquiring) { stopping += 1 } else { others += 1 }
        }
        if stopping > 0 {
            let pending = device.output.delay()
            if others == 0 {
                // Nothing else plays: drop what the device holds, so the stop is heard at once.
                // Dropped before the jobs are done: after that the decode side may close the device.
                device.output.drop()
                forEachJob { slot, job in finish(slot, job, heard: job.heard(pending: pending), stopped: true) }
                lastPending = .max
                return
            }
            forEachJob { slot, job in
                guard job.stopRequested.load(ordering: .acquiring), !job.fadingOut else { return }
                if job.inputEnded {
                    // Its tail plays out under the others: all of it is heard.
                    finish(slot, job, heard: job.mixed, stopped: true)
                } else if let id = job.mixID {
                    job.fadingOut = true
                    device.mixer.setGain(
                        0, of: id, overFrames: Int(Double(device.output.format.sampleRate) * Self.stopFadeSeconds))
                }
            }
        }
        forEachJob { _, job in
            let request = job.requestedGain
            guard !job.fadingOut, request != job.appliedGainRequest, let id = job.mixID else { return }
            job.appliedGainRequest = request
            let (gain, rampFrames) = PlaybackJob.unpack(request)
            device.mixer.setGain(gain, of: id, overFrames: rampFrames)
        }
    }

    /// The only stream, at unity mixer gain: straight from its ring to the device.
    private func writeAlone(_ job: PlaybackJob, _ device: OpenDevice, room: Int) throws(OutputFailure) {
        var room = room
        var wrote = false
        while room > 0 {
            let (source, available) = job.ring.readable()
            if available == 0 { break }
            let frames = min(available, room, device.blockFrames)
            // Fewer taken only after a recovered xrun; the rest goes next time round.
            let taken = try device.output.write(job.directProcessor.process(source, frames: frames), frames: frames)
            job.ring.commitRead(taken)
            device.written += taken
            job.mixed += taken
            job.lastEnd = device.written
            wrote = true
            // A device that took a whole empty buffer may be unpaced (`null`, a file): asked again
            // at once, it takes the ring in one pass instead of a cycle per block. A paced device
            // is full now and comes back next cycle.
            guard taken == frames, room == device.output.bufferFrames else { break }
            room = try device.output.writableFrames()
        }
        if wrote {
            afterWrite(device)
        } else if job.endOfInput.load(ordering: .acquiring) {
            // The decode side commits before it sets endOfInput: look once more.
            if job.ring.readable().frames == 0 { job.inputEnded = true }
        } else {
            waitForData(job, device)
        }
    }

    /// Sleeps until `job` has a good chunk or its input ended (`hasDataToWake`), or the device
    /// is interrupted.
    private func waitForData(_ job: PlaybackJob, _ device: OpenDevice) {
        job.wantsData.store(true, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        // The decode side may have committed meanwhile.
        if job.hasDataToWake {
            job.wantsData.store(false, ordering: .relaxed)
            return
        }
        device.output.waitForInterrupt(milliseconds: -1)
    }

    /// Publishes what each stream has been heard, and ticks progress.
    func afterWrite(_ device: OpenDevice) {
        keptOpen.soundWritten()
        let pending = device.output.delay()
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)  // the vDSO: no system call
        let now = UInt64(clock.tv_sec) &* 1_000_000_000 &+ UInt64(clock.tv_nsec)
        forEachJob { _, job in
            job.framesPlayed.store(job.heard(pending: pending), ordering: .releasing)
            let step = job.progressStepFrames.load(ordering: .relaxed)
            if step != job.tickStep {
                // A new cadence (someone started watching) begins with a tick now.
                job.tickStep = step
                (job.nextTick, job.nextTickTime) = (max(job.mixed, 1), 0)  // never before its first frame
            }
            if step > 0, job.mixed >= job.nextTick, now >= job.nextTickTime {
                job.nextTick = (job.mixed / step + 1) * step
                job.nextTickTime = now &+ UInt64(Double(step) / Double(device.output.format.sampleRate) * 1e9)
                job.progressTicks.add(1, ordering: .releasing)
                job.spaceAvailable.signal()
            } else if job.ring.isHalfEmpty {
                job.spaceAvailable.signal()
            }
        }
    }

    private func publish(_ device: OpenDevice, pending: Int) {
        forEachJob { _, job in job.framesPlayed.store(job.heard(pending: pending), ordering: .releasing) }
    }
}
