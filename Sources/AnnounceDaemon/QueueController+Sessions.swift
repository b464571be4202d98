import AnnounceModel
import AnnounceSystem
import AnnounceEngine

/// The session layer as the daemon carries it out (DESIGN §3): the mixed lane (mixable
/// sessions and alerts, never queued), the policy's interruptions and ducking, and what
/// happens when a device is busy or goes away. The rules themselves are `SessionPolicy`'s,
/// `Scheduler`'s and `DeviceSupervisor`'s; this is where their decisions meet the engines.
extension QueueController {
    struct MixedStream {
        var item: QueueItem
        var isAlert: Bool
        /// A play is in progress on the player.
        var playing = false
        /// Paused by an interruption, or waiting for its device.
        var waiting: Waiting?
        /// Why we stopped the play in progress.
        var stopIntent: StopIntent?
        /// Frames heard in the play in progress.
        var frames: Int64 = 0

        enum Waiting { case interrupted, device }
        enum StopIntent: Equatable { case interrupt, end(Outcome) }
    }

    // MARK: the mixed lane and alerts

    /// `announce alert`: a system sound, mixed over everything at once; never queued, never
    /// preempted, not ducked, not spooled. Quiet mode silences it unless `ignoreQuiet`.
    func handleAlert(_ request: Request, from connection: Connection, now: Double) {
        guard let alert = request.alert else { return reject(connection, "alert needs an \"alert\"") }
        if let problem = Daemon.problem(with: alert) { return reject(connection, "alert: \(problem)") }
        var passed: Set<String> = []
        if let failure = deviceFailure([alert.device ?? configuration.device], environment: alert.environment, passed: &passed) {
            return connection.sendAndClose(WireProtocol.encode(Reply.failure(failure.exitCode, failure.description)))
        }
        // At once or not at all: a busy device fails it (69) instead of making it wait.
        let item = QueueItem(id: newID(), clip: Clip(path: alert.path, device: alert.device, gain: alert.gain, environment: alert.environment),
                             priority: .high, arrival: now, session: AudioSession(category: .ambient), ifBusy: .fail)
        mixed[item.id] = MixedStream(item: item, isAlert: true)
        connection.send(WireProtocol.encode(Reply(ids: [item.id])))
        if request.wait ?? false { subscribe(connection, to: [item.id], progress: false) }
        if quiet.isQuiet(at: now) && !(alert.ignoreQuiet ?? false) {
            return endMixed(item.id, Outcome(.silenced, reason: "quiet mode"), now: now)
        }
        playMixed(item.id)
    }

    /// A mixable session starts: quiet mode may silence it; otherwise the policy decides whom
    /// it interrupts and ducks, and it plays at once.
    func startMixed(_ item: QueueItem, alert: Bool, now: Double) {
        mixed[item.id] = MixedStream(item: item, isAlert: alert)
        if item.sessionCategory.silencedByQuietMode && quiet.isQuiet(at: now) {
            return endMixed(item.id, Outcome(.silenced, reason: "quiet mode"), now: now)
        }
        if item.interrupted { interruptedIDs.insert(item.id) }
        apply(activate(item, preempting: nil, now: now), now: now)
        if policy[item.id]?.isPlaying ?? true { playMixed(item.id) } else { mixed[item.id]?.waiting = .interrupted }
    }

    func playMixed(_ id: String) {
        guard var stream = mixed[id], !stream.playing else { return }
        applyDucking(policy.setSuspended(id, false))
        stream.playing = true
        stream.waiting = nil
        stream.frames = 0
        mixed[id] = stream
        deviceCloseAt = nil
        driver.play(stream.item, devices: stream.item.clip.devices(default: configuration.device),
                    gain: startingGain(stream.item.id), alert: stream.isAlert, watched: hub.isProgressWatched(id))
    }

    /// Ends a mixed stream for good with `outcome`: at once when it does not play, else after its stop.
    func endMixed(_ id: String, _ outcome: Outcome, now: Double) {
        guard let stream = mixed[id] else { return }
        if stream.playing {
            mixed[id]?.stopIntent = .end(outcome)
            driver.stop(id)
        } else {
            mixed[id] = nil
            apply([.finish(stream.item, outcome)], now: now)
        }
    }

    func mixedEnded(_ id: String, heard: Int64, total: Int64?, end: PlaybackEnd, details: PlayDetails, now: Double) {
        guard var stream = mixed[id] else { return }
        stream.playing = false
        let (sum, overflow) = stream.item.heardFrames.addingReportingOverflow(max(0, heard))
        stream.item.heardFrames = overflow ? .max : sum
        if let total { stream.item.totalFrames = total }
        let intent = stream.stopIntent
        stream.stopIntent = nil
        mixed[id] = stream
        switch (end, intent) {
        case (_, .end(let outcome)?):
            endMixed(id, outcome, now: now)
        case (.finished, _):
            endMixed(id, Outcome(.played), now: now)
        case (.stopped, _), (.held, _):
            // Interrupted (or the daemon is stopping): it keeps what was heard and waits.
            if !stream.isAlert { do { try spool.save(stream.item) } catch { logger.error("\(error.description)") } }
            if terminating { return }
            if policy[id]?.isPlaying ?? true { playMixed(id) } else { mixed[id]?.waiting = .interrupted }
        case (.failed(let code, let message), _):
            if deviceTrouble(details, item: stream.item, now: now) != nil {
                // Waits for the device, unless an interruption keeps it paused anyway; meanwhile
                // it ducks no one.
                mixed[id]?.waiting = intent == .interrupt || policy[id].map({ !$0.isPlaying }) == true ? .interrupted : .device
                applyDucking(policy.setSuspended(id, true))
                if !stream.isAlert { do { try spool.save(stream.item) } catch { logger.error("\(error.description)") } }
            } else {
                endMixed(id, Outcome(.failed, reason: message, code: code), now: now)
            }
        case (.silenced(let reason), _):
            endMixed(id, Outcome(.silenced, reason: reason), now: now)
        }
        scheduleDeviceClose(now: now)
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
            if !interruptedIDs.contains(id), let other = anyItem(id) {
                interruptedIDs.insert(id)
                hub.emit(Event(.interruptionBegan, time: now, id: id, path: other.clip.path, priority: other.priority,
                           reason: interruption.reason.rawValue, heard: seconds(other.heardFrames, of: id)))
            }
            if let stream = mixed[id] {
                if stream.playing {
                    mixed[id]?.stopIntent = .interrupt
                    driver.stop(id)
                }
                mixed[id]?.waiting = .interrupted
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
            if interruptedIDs.contains(end.id), let other = anyItem(end.id) {
                interruptedIDs.remove(end.id)
                hub.emit(Event(.interruptionEnded, time: now, id: end.id, path: other.clip.path, priority: other.priority,
                           shouldResume: end.shouldResume))
            }
            if end.shouldResume, mixed[end.id]?.waiting == .interrupted { playMixed(end.id) }
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
            if mixed[id]?.waiting == .interrupted { playMixed(id) }
        }
        return scheduler.holds.contains(.awaitingResume) ? scheduler.release(.awaitingResume, now: now) : []
    }

    func applyDucking(_ changes: DuckChanges) {
        let gain = duckGain
        for id in changes.ducked { driver.setGain(id, gain: gain, overSeconds: GainRamp.duckDownSeconds) }
        for id in changes.unducked { driver.setGain(id, gain: 1, overSeconds: GainRamp.duckUpSeconds) }
    }

    // MARK: device trouble

    /// A play failed on its device: the hold that waits for it (with the events that say so
    /// the first time), or nil when the failure is final. `DeviceSupervisor` decides.
    func deviceTrouble(_ details: PlayDetails, item: QueueItem, now: Double) -> QueueHold? {
        let device = details.troubleDevice ?? details.devices.description
        guard let wait = devices.failed(details.deviceTrouble, on: device, failsWhenBusy: item.ifBusy == .fail, now: now) else {
            return nil
        }
        func interrupted(_ reason: InterruptionReason, _ warning: String) {
            if interruptedIDs.insert(item.id).inserted {
                hub.emit(Event(.interruptionBegan, time: now, id: item.id, path: item.clip.path, priority: item.priority,
                               reason: reason.rawValue, heard: seconds(item.heardFrames, of: item.id),
                               device: device, warning: warning))
            }
        }
        switch wait {
        case .busy(let reason):
            interrupted(.deviceBusy, reason)
        case .lost(let reason, let newlyLost):
            if newlyLost {
                logger.warning("device '\(device)' lost: \(reason); \(item.id) keeps its place and resumes when it is back")
                hub.emit(Event(.routeChange, time: now, reason: "old-device-unavailable", device: device, warning: reason))
            }
            interrupted(.deviceLost, reason)
        case .stillLost:
            break
        }
        return wait.hold
    }

    /// Per-item devices close as soon as nothing plays on them (the player closes only idle
    /// ones); the daemon's own device after its grace, once nothing plays at all.
    func scheduleDeviceClose(now: Double) {
        if openDevices.contains(where: { $0 != configuration.device }) {
            // Not the devices an item is about to play on (the next one may share its device).
            var inUse: Set<String> = [configuration.device]
            for item in [scheduler.playing].compactMap({ $0 }) + mixed.values.filter(\.playing).map(\.item) {
                inUse.formUnion(item.clip.devices(default: configuration.device))
            }
            driver.closeDevices(except: inUse)
        }
        guard !isPlaying else { return }
        if openDevices.contains(configuration.device), deviceCloseAt == nil { deviceCloseAt = now + configuration.deviceGrace }
    }
}
