import AnnounceModel
import AnnounceSystem

/// A call on the sound server (DESIGN §3, Interruptions from other applications): every playing
/// item pauses where it was heard and the queue holds until the call ends.
extension QueueController {
    /// A call: every playing item pauses at the frame heard to (alerts, a few seconds at most, play
    /// on), and the queue holds until it ends. `starting`: the main-lane item about to start, which
    /// the caller holds instead.
    func beginCall(by call: String, now: Double, starting: QueueItem? = nil) {
        logger.info("a call plays (\(call)): announce waits until it ends")
        func announce(_ item: QueueItem, heard: Int64) {
            callInterrupted.insert(item.id)
            guard lifecycles[item.id]?.interrupt() == true else { return }
            hub.emit(
                Event(
                    time: now,
                    .interruptionBegan(
                        EventItem(item), reason: .call, heard: seconds(heard, of: item.id), warning: call)))
        }
        for stream in lanes.mixed.all where !stream.isAlert {
            announce(stream.item, heard: stream.item.heardFrames + stream.frames)
            applyDucking(policy.setSuspended(stream.item.id, true))
            carryOut(lanes.mixed.interrupt(stream.item.id), now: now)
        }
        if let starting {
            announce(starting, heard: starting.heardFrames)
        } else {
            // Its interruption-began comes with the scheduler's `.interrupted`, once its play has
            // stopped: with the frame it was heard to.
            if let playing = lanes.main.playing { callInterrupted.insert(playing.id) }
            carryOut(lanes.main.hold(.call, now: now), now: now)
        }
    }

    /// The call ended (or its stream corked): what it paused goes on where it was heard to, unless the
    /// user paused the queue meanwhile or a session of announce's own still interrupts it.
    func endCall(now: Double) {
        logger.info("the call ended: announce goes on")
        let ids = callInterrupted.sorted()
        callInterrupted = []
        for id in ids {
            guard let item = anyItem(id) else { continue }
            let isMixed = lanes.isMixed(id)
            let resumes =
                isMixed ? policy[id].map { !$0.isInterrupted && !$0.awaitsResume } ?? true : !lanes.main.isPaused
            if lifecycles[id]?.endInterruption() == true {
                hub.emit(
                    Event(time: now, .interruptionEnded(EventItem(item), shouldResume: resumes)))
            }
            guard isMixed && resumes else { continue }
            applyDucking(policy.setSuspended(id, false))
            carryOut(lanes.mixed.resume(id), now: now)
        }
        if lanes.main.holds.contains(.call) { carryOut(lanes.main.release(.call, now: now), now: now) }
    }
}
