import AnnounceModel
import AnnounceSystem
import AnnounceEngine

/// The session layer as the daemon carries it out (DESIGN §3): the mixed lane (mixable
/// sessions and alerts, never queued), the policy's interruptions and ducking, and what
/// happens when a device is busy or goes away. The rules themselves are `SessionPolicy`'s,
/// `Scheduler`'s and `DeviceSupervisor`'s; this is where their decisions meet the engines.
extension QueueController {
    // MARK: the mixed lane and alerts

    /// `announce alert`: a system sound, mixed over everything at once; never queued, never
    /// preempted, not ducked, not spooled. Quiet mode silences it unless `ignoreQuiet`.
    /// Its values are already checked (`Request.problem`).
    func handleAlert(_ alert: AlertRequest, wait: Bool, from connection: Connection, now: Double) {
        var passed: Set<String> = []
        if let failure = deviceFailure([alert.device ?? configuration.device], environment: alert.environment, passed: &passed) {
            return connection.sendAndClose(WireProtocol.encode(Reply.failure(failure.exitCode, failure.description)))
        }
        // At once or not at all: a busy device fails it (69) instead of making it wait.
        var clip = Clip(path: alert.path, device: alert.device, gain: alert.gain, environment: alert.environment)
        clip.pathBytes = alert.pathBytes
        let item = QueueItem(id: newID(), clip: clip, priority: .high, arrival: now, session: AudioSession(category: .ambient), ifBusy: .fail)
        lifecycles[item.id] = ItemLifecycle()
        mixed.add(item, alert: true)
        connection.send(WireProtocol.encode(Reply.ids([item.id])))
        if wait { subscribe(connection, to: [item.id], progress: false) }
        if quiet.isQuiet(at: now) && !(alert.ignoreQuiet ?? false) {
            return endMixed(item.id, .quietMode, now: now)
        }
        playMixed(item.id)
    }

    /// A mixable session starts: quiet mode may silence it; otherwise the policy decides whom
    /// it interrupts and ducks, and it plays at once.
    func startMixed(_ item: QueueItem, alert: Bool, now: Double) {
        mixed.add(item, alert: alert)
        if item.sessionCategory.silencedByQuietMode && quiet.isQuiet(at: now) {
            return endMixed(item.id, .quietMode, now: now)
        }
        let (chosen, silenced) = otherAudioStartMixed(item)
        if let silenced { return endMixed(item.id, Outcome(.silenced, reason: silenced), now: now) }
        apply(activate(chosen, preempting: nil, now: now), now: now)
        if otherAudioScene?.call != nil {
            // A call is on: it waits, silent, until the call ends.
            callInterrupted.insert(item.id)
            applyDucking(policy.setSuspended(item.id, true))
        }
        carryOut((policy[item.id]?.isPlaying ?? true) && !heldByCall(item.id) ? mixed.play(item.id) : mixed.interrupt(item.id),
                 now: now)
    }

    func playMixed(_ id: String) {
        carryOut(mixed.play(id), now: clock())
    }

    /// Ends a mixed stream for good with `outcome`: at once when it does not play, else after its stop.
    func endMixed(_ id: String, _ outcome: Outcome, now: Double) {
        carryOut(mixed.end(id, outcome), now: now)
    }

    func mixedEnded(_ id: String, heard: Int64, total: Int64?, end: PlaybackEnd, details: PlayDetails, now: Double) {
        let effects = mixed.playEnded(id, heard: heard, total: total, end: end,
                                      mayPlay: (policy[id]?.isPlaying ?? true) && !heldByCall(id),
                                      stopping: terminating) { deviceTrouble(details, item: $0, now: now) != nil }
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
                driver.play(item, devices: item.clip.devices(default: configuration.device), gain: startingGain(item.id),
                            alert: alert, watched: hub.isProgressWatched(item.id), silence: configuration.silence)
            case .stop(let id):
                driver.stop(id)
            case .persist(let item):
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .suspend(let id):
                applyDucking(policy.setSuspended(id, true))
            case .finish(let item, let outcome):
                apply([.finish(item, outcome)], now: now)
            }
        }
    }

    // MARK: sessions

    /// The mixer gain an item starts at: ducked while a duck-others session plays.
    func startingGain(_ id: String) -> Float {
        policy[id]?.ducked == true ? duckGain : 1
    }

    /// The duck level of the playing duck-others session (its `--duck-level`, else the config's).
    var duckGain: Float {
        let level = policy.duckers.lazy.compactMap { self.item($0)?.duckLevel }.first ?? configuration.duckLevel
        return Gain.decibels(Float(level))
    }

    /// A playing item: on the mixed lane or the main lane's.
    func item(_ id: String) -> QueueItem? {
        if let stream = mixed[id] { return stream.item }
        if let playing = scheduler.playing, playing.id == id { return playing }
        return nil
    }

    /// Any live item, also one waiting in the queue.
    func anyItem(_ id: String) -> QueueItem? {
        item(id) ?? scheduler.ready.first { $0.id == id } ?? scheduler.scheduled.first { $0.id == id }
    }

    /// A session starts playing: pause whom it interrupts, duck whom it ducks. Returns the
    /// scheduler's effects (a main-lane item it interrupts is held).
    func activate(_ item: QueueItem, preempting: String?, now: Double) -> [SchedulerEffect] {
        let decision = policy.activate(item.id, session: item.audioSession, preempting: preempting)
        var effects: [SchedulerEffect] = []
        for interruption in decision.interrupted where interruption.reason != .preempted {
            let id = interruption.id
            if let other = anyItem(id), lifecycles[id]?.interrupt() == true {
                hub.emit(Event(.interruptionBegan, time: now, id: id, path: other.clip.path, priority: other.priority,
                           reason: EventReason(interruption.reason), heard: seconds(other.heardFrames, of: id)))
            }
            if mixed[id] != nil {
                carryOut(mixed.interrupt(id), now: now)
            } else if scheduler.playing?.id == id {
                effects += scheduler.hold(.interruptedBy(item.id), now: now)
            }
        }
        applyDucking(decision.ducking)
        return effects
    }

    /// A session reached its final outcome: the streams it interrupted go on (or wait for
    /// `announce resume`), its ducking ends.
    func deactivate(_ id: String, now: Double) -> [SchedulerEffect] {
        guard policy[id] != nil else { return [] }
        let decision = policy.deactivate(id)
        for end in decision.ended {
            if let other = anyItem(end.id), lifecycles[end.id]?.endInterruption() == true {
                hub.emit(Event(.interruptionEnded, time: now, id: end.id, path: other.clip.path, priority: other.priority,
                           shouldResume: end.shouldResume))
            }
            if end.shouldResume && !heldByCall(end.id) { carryOut(mixed.resume(end.id), now: now) }
        }
        applyDucking(decision.ducking)
        var effects: [SchedulerEffect] = []
        if scheduler.holds.contains(.interruptedBy(id)) { effects += scheduler.release(.interruptedBy(id), now: now) }
        return effects
    }

    /// `announce resume`: streams left paused by a `--no-notify-others` session go on.
    func resumeAwaiting(now: Double) -> [SchedulerEffect] {
        for id in policy.awaitingResume {
            applyDucking(policy.resume(id))
            if !heldByCall(id) { carryOut(mixed.resume(id), now: now) }
        }
        return scheduler.holds.contains(.awaitingResume) ? scheduler.release(.awaitingResume, now: now) : []
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
        ducker.want(gain: ducking.map { _ in Double(duckGain) }, environment: ducking?.clip.environment,
                    sparedRoles: configuration.interruptingRoles)
    }

    // MARK: device trouble

    /// A play failed on its device: the hold that waits for it (with the events that say so
    /// the first time), or nil when the failure is final. `DeviceSupervisor` decides.
    func deviceTrouble(_ details: PlayDetails, item: QueueItem, now: Double) -> QueueHold? {
        guard let trouble = details.deviceTrouble,
              let wait = devices.failed(trouble, failsWhenBusy: item.ifBusy == .fail, now: now) else { return nil }
        let device = trouble.device
        func interrupted(_ reason: InterruptionReason, _ warning: String) {
            if lifecycles[item.id]?.interrupt() == true {
                hub.emit(Event(.interruptionBegan, time: now, id: item.id, path: item.clip.path, priority: item.priority,
                               reason: EventReason(reason), heard: seconds(item.heardFrames, of: item.id),
                               device: device, warning: warning))
            }
        }
        switch wait {
        case .busy(let reason):
            interrupted(.deviceBusy, reason)
        case .lost(let reason, let newlyLost):
            if newlyLost {
                logger.warning("device '\(device)' lost: \(reason); \(item.id) keeps its place and resumes when it is back")
                hub.emit(Event(.routeChange, time: now, reason: .oldDeviceUnavailable, device: device, warning: reason))
            }
            interrupted(.deviceLost, reason)
        case .stillLost:
            break
        }
        return wait.hold
    }

    /// Per-item devices close as soon as nothing plays on them (the engine driver closes only idle
    /// ones); the daemon's own device after its grace, once nothing plays at all.
    func scheduleDeviceClose(now: Double) {
        if devices.open.contains(where: { $0 != configuration.device }) {
            // Not the devices an item is about to play on (the next one may share its device).
            var inUse: Set<String> = [configuration.device]
            for item in [scheduler.playing].compactMap({ $0 }) + mixed.all.filter(\.playing).map(\.item) {
                inUse.formUnion(item.clip.devices(default: configuration.device))
            }
            driver.closeDevices(except: inUse)
        }
        guard !isPlaying else { return }
        devices.nothingPlays(own: configuration.device, grace: configuration.deviceGrace, now: now)
    }
}
