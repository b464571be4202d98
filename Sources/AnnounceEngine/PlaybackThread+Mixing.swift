import AnnounceOutput
import AnnounceSystem
import Synchronization

extension PlaybackThread {
    /// Several streams, or one being ducked or faded: one block through the mixer.
    func mix(_ device: OpenDevice, room: Int) throws(OutputFailure) {
        let output = device.output
        var block = min(room, device.blockFrames)
        var starving = false
        var live = 0
        var ongoing = 0
        var arrivingEmpty = 0
        var longestEnding = 0
        forEachJob { _, job in
            job.emptyAtLook = false
            guard !job.inputEnded else { return }
            if job.fadeWaiting, let id = job.mixID {
                // The fade begins on the block boundary where the wake-up silence ends.
                if job.mixed >= job.fadeInAfter {
                    job.fadeWaiting = false
                    device.mixer.setGain(
                        PlaybackJob.unpack(job.requestedGain).gain, of: id, overFrames: job.fadeInFrames)
                } else {
                    block = min(block, job.fadeInAfter - job.mixed)
                }
            }
            // The end first, then the fill: the decode side commits its last frames before it
            // sets the end, so a fill read before the end could miss them and cut the stream.
            let ended = job.endOfInput.load(ordering: .acquiring)
            let filled = job.ring.filledFrames
            if ended {
                // Every frame of it was mixed: from here on only its tail is waited for.
                if filled == 0 { job.inputEnded = true } else { live += 1 }
                longestEnding = max(longestEnding, filled)
                return
            }
            live += 1
            ongoing += 1
            if filled > 0 {
                block = min(block, filled)
                return
            }
            job.emptyAtLook = true
            if job.arrivesWhileRead {
                arrivingEmpty += 1
            } else {
                starving = true
            }
        }
        if live == 0 { return }
        // A download behind leaves a gap in itself, not in every stream; alone, it is waited for.
        if ongoing > 0 && arrivingEmpty == ongoing { starving = true }
        // Only endings left: no block longer than the longest of them, so no silence is padded on.
        if ongoing == 0 { block = min(block, longestEnding) }
        if starving {
            // A stream's decoding is late (it runs seconds ahead, so the disk stalled): wait for
            // it rather than leave a gap in it. Stops, gains and new streams still interrupt.
            // The streams found empty above are the ones waited for, flagged whatever they hold
            // now, then looked at again: frames committed since then are seen here, or wake us
            // once there are enough (`hasDataToWake`).
            forEachJob { _, job in
                if job.emptyAtLook { job.wantsData.store(true, ordering: .sequentiallyConsistent) }
            }
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            var arrived = false
            forEachJob { _, job in
                if job.emptyAtLook && (job.endOfInput.load(ordering: .acquiring) || job.ring.filledFrames > 0) {
                    arrived = true
                }
            }
            if !arrived { output.waitForInterrupt(milliseconds: -1) }
            forEachJob { _, job in job.wantsData.store(false, ordering: .relaxed) }
            return
        }
        let mixer = device.mixer
        mixer.beginBlock(frames: block)
        forEachJob { _, job in
            guard !job.inputEnded, let id = job.mixID else { return }
            var taken = 0
            while taken < block {
                let (source, available) = job.ring.readable()
                let count = min(available, block - taken)
                if count == 0 { break }
                let floats = job.mixProcessor.process(source, frames: count).assumingMemoryBound(to: Float.self)
                mixer.accumulate(id, floats, frames: count)
                job.ring.commitRead(count)
                taken += count
            }
            if taken > 0 {
                job.mixed += taken
                job.lastEnd = device.written + taken
            }
            if taken < block, job.endOfInput.load(ordering: .acquiring), job.ring.readable().frames == 0 {
                job.inputEnded = true
            }
        }
        let frames = device.busProcessor.process(UnsafeRawPointer(mixer.finishBlock()), frames: block)
        var offset = 0
        while offset < block {
            let taken = try output.write(frames + offset * output.format.bytesPerFrame, frames: block - offset)
            if taken == 0 { try output.waitUntilWritable() }
            offset += taken
        }
        device.written += block
        afterWrite(device)
        // A stopped stream that has faded to silence is done (the delay asked once, before any finish).
        var pending: Int?
        forEachJob { slot, job in
            guard job.fadingOut, let id = job.mixID, mixer.ramp(of: id)?.isSettled ?? true else { return }
            let delay = pending ?? output.delay()
            pending = delay
            finish(slot, job, heard: job.heard(pending: delay), stopped: true)
        }
    }
}
