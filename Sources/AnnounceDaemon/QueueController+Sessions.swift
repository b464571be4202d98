import AnnounceEngine
import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The session layer as the daemon carries it out (DESIGN §3): the mixed lane (mixable
/// sessions and alerts, never queued), the policy's interruptions and ducking, and what
/// happens when a device is busy or goes away. The rules themselves are `SessionPolicy`'s,
/// `Scheduler`'s and `DeviceSupervisor`'s; this is where their decisions meet the engines.
extension QueueController {
    // MARK: the mixed lane

    /// A mixable session starts: quiet mode may silence it; otherwise the policy decides whom
    /// it interrupts and ducks, and it plays at once.
    func startMixed(_ item: QueueItem, alert: Bool, now: Double) {
        lanes.mixed.add(item, alert: alert)
        if quietSilences(item, now: now) { return endMixed(item.id, .quietMode, now: now) }
        let (chosen, silenced) = otherAudioStartMixed(item)
        if let silenced { return endMixed(item.id, Outcome(.silenced, reason: silenced), now: now) }
        carryOut(activate(chosen, preempting: nil, now: now), now: now)
        if otherAudioScene?.call != nil {
            // A call is on: it waits, silent, until the call ends.
            callInterrupted.insert(item.id)
            applyDucking(policy.setSuspended(item.id, true))
        }
        carryOut(
            (policy[item.id]?.isPlaying ?? true) && !heldByCall(item.id)
                ? lanes.mixed.play(item.id) : lanes.mixed.interrupt(item.id),
            now: now)
    }

    func playMixed(_ id: ItemID) {
        carryOut(lanes.mixed.play(id), now: clock())
    }

    /// Ends a mixed stream for good with `outcome`: at once when it does not play, else after its stop.
    func endMixed(_ id: ItemID, _ outcome: Outcome, now: Double) {
        carryOut(lanes.mixed.end(id, outcome), now: now)
    }

    func mixedEnded(_ id: ItemID, heard: Int64, total: Int64?, end: PlaybackEnd, details: PlayDetails, now: Double) {
        let effects = lanes.mixed.playEnded(
            id, heard: heard, total: total, end: end,
            mayPlay: (policy[id]?.isPlaying ?? true) && !heldByCall(id),
            stopping: terminating
        ) { deviceTrouble(details, item: $0, now: now) != nil }
        carryOut(effects, now: now)
        scheduleDeviceClose(now: now)
    }

    /// The mixed lane's effects, carried out in order.
    func carryOut(_ effects: [MixedLaneEffect], now: Double) {
        for effect in effects {
            switch effect {
            case .play(let item, let alert):
                applyDucking(policy.setSuspended(item.id, false))
                devices.playStarts()
                lifecycles[item.id]?.start()
                driver.play(
                    item, devices: item.clip.devices(default: configuration.device), gain: startingGain(item.id),
                    alert: alert, watched: hub.isProgressWatched(item.id),
                    tuning: configuration.tuning(for: item, nightLevel: alert ? nil : nightLevel(item, now: now)))
            case .stop(let id):
                driver.stop(id)
            case .persist(let item):
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .suspend(let id):
                applyDucking(policy.setSuspended(id, true))
            case .finish(let item, let outcome):
                carryOut([SchedulerEffect.finish(item, outcome)], now: now)
            }
        }
    }

    // MARK: sessions

    /// The mixer gain an item starts at: ducked while a duck-others session plays.
    func startingGain(_ id: ItemID) -> Float {
        policy[id]?.ducked == true ? duckGain : 1
    }

    /// The duck level of the playing duck-others session (its `--duck-level`, else the config's).
    var duckGain: Float {
        let level = policy.duckers.lazy.compactMap { self.item($0)?.duckLevel }.first ?? configuration.duckLevel
        return Gain.decibels(Float(level))
    }

    /// A playing item, on either lane.
    func item(_ id: ItemID) -> QueueItem? { lanes.playing(id) }

    /// Any live item, also one waiting in the queue.
    func anyItem(_ id: ItemID) -> QueueItem? { lanes.item(id) }

    /// A session starts playing: pause whom it interrupts, duck whom it ducks. Returns the
    /// the scheduler's effects (a main-lane item it interrupts is held).
    func activate(_ item: QueueItem, preempting: ItemID?, now: Double) -> [SchedulerEffect] {
        let decision = policy.activate(item.id, session: item.audioSession, preempting: preempting)
        var effects: [SchedulerEffect] = []
        for interruption in decision.interrupted where interruption.reason != .preempted {
            let id = interruption.id
            if let other = anyItem(id), lifecycles[id]?.interrupt() == true {
                hub.emit(
                    Event(
                        time: now,
                        .interruptionBegan(
                            EventItem(other), reason: EventReason(interruption.reason),
                            heard: seconds(other.heardFrames, of: id))))
            }
            if lanes.isMixed(id) {
                carryOut(lanes.mixed.interrupt(id), now: now)
            } else if lanes.main.playing?.id == id {
                effects += lanes.main.hold(.interruptedBy(item.id), now: now)
            }
        }
        applyDucking(decision.ducking)
        return effects
    }

    /// A session reached its final outcome: the streams it interrupted go on (or wait for
    /// `announce resume`), its ducking ends.
    func deactivate(_ id: ItemID, now: Double) -> [SchedulerEffect] {
        guard policy[id] != nil else { return [] }
        let decision = policy.deactivate(id)
        for end in decision.ended {
            if let other = anyItem(end.id), lifecycles[end.id]?.endInterruption() == true {
                hub.emit(
                    Event(time: now, .interruptionEnded(EventItem(other), shouldResume: end.shouldResume)))
            }
            if end.shouldResume && !heldByCall(end.id) { carryOut(lanes.mixed.resume(end.id), now: now) }
        }
        applyDucking(decision.ducking)
        var effects: [SchedulerEffect] = []
        if lanes.main.holds.contains(.interruptedBy(id)) { effects += lanes.main.release(.interruptedBy(id), now: now) }
        return effects
    }

    /// `announce resume`: streams left paused by a `--no-notify-others` session go on.
    func resumeAwaiting(now: Double) -> [SchedulerEffect] {
        for id in policy.awaitingResume {
            applyDucking(policy.resume(id))
            if !heldByCall(id) { carryOut(lanes.mixed.resume(id), now: now) }
        }
        return lanes.main.holds.contains(.awaitingResume) ? lanes.main.release(.awaitingResume, now: now) : []
    }

    func applyDucking(_ changes: DuckChanges) {
        let gain = duckGain
        for id in changes.ducked { driver.setGain(id, gain: gain, overSeconds: GainRamp.duckDownSeconds) }
        for id in changes.unducked { driver.setGain(id, gain: 1, overSeconds: GainRamp.duckUpSeconds) }
        duckOtherAudio()
    }

    /// Other applications are lowered while a duck-others session plays, on the sound server
    /// its device reaches (the first such session's), and let go when none does.
    func duckOtherAudio() {
        guard let ducker else { return }
        let ducking = policy.duckers.lazy.compactMap { self.item($0) }.first
        ducker.want(
            gain: ducking.map { _ in Double(duckGain) }, environment: ducking?.clip.environment,
            sparedRoles: configuration.interruptingRoles)
    }
}
