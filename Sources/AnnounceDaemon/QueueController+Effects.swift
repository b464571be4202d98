import AnnounceModel
import AnnounceSystem
import AnnounceEngine

/// The models' effects carried out, and the engine driver's reports taken in.
extension QueueController {
    func apply(_ effects: [SchedulerEffect], now: Double) {
        // A worklist rather than recursion: an item silenced by quiet mode brings the
        // scheduler's next effects, which may silence the next item, and so on.
        var effects = effects
        var next = 0
        while next < effects.count {
            let effect = effects[next]
            next += 1
            switch effect {
            case .persist(let item):
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .play(let item) where item.sessionCategory.silencedByQuietMode && quiet.isQuiet(at: now):
                // Never reaches the engines: it ends `silenced` and the next item is offered.
                effects += scheduler.playbackEnded(id: item.id, heardFrames: 0, totalFrames: nil,
                                                   end: .silenced(reason: "quiet mode"), now: now)
            case .play(let item):
                applyDucking(policy.setSuspended(item.id, false))
                if let stream = policy[item.id], !stream.isPlaying {
                    // Left paused by a --no-notify-others session (or still interrupted): it waits
                    // at the head of the queue for `announce resume`.
                    effects += scheduler.playbackEnded(id: item.id, heardFrames: 0, totalFrames: nil,
                                                       end: .held(.awaitingResume), now: now)
                    continue
                }
                var item = item
                if policy[item.id] == nil {
                    // Its session starts: a call may keep it from starting, or, on its first start,
                    // other audio with --if-other-audio.
                    switch otherAudioStart(item, now: now) {
                    case .decline(let more):
                        effects += more
                        continue
                    case .play(let chosen):
                        item = chosen
                    }
                }
                if policy[item.id] == nil {
                    effects += activate(item, preempting: preemptedFor.removeValue(forKey: item.id), now: now)
                }
                devices.playStarts()
                meter.playingTotal = item.totalFrames
                meter.playingFrames = 0
                lifecycles[item.id]?.start()
                driver.play(item, devices: item.clip.devices(default: configuration.device), gain: startingGain(item.id),
                            watched: hub.isProgressWatched(item.id), silence: configuration.silence)
                // Started items never expire, also after a crash; saved after the play began.
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .stopPlayback(let id, _):
                driver.stop(id)
            case .interrupted(let item, let reason):
                switch reason {
                case .preempted(let by): preemptedFor[by] = item.id
                case .held, .paused:
                    // Silent until it plays again: it ducks no one meanwhile.
                    applyDucking(policy.setSuspended(item.id, true))
                default: break
                }
                // Interruptions the daemon announced itself (sessions, the device) are not repeated.
                if lifecycles[item.id]?.interrupt() == true {
                    hub.emit(Event(.interruptionBegan, time: now, id: item.id, path: item.clip.path, priority: item.priority,
                               reason: Self.describe(reason), heard: seconds(item.heardFrames, of: item.id),
                               warning: reason == .held(.call) ? otherAudioScene?.call : nil))
                }
            case .finish(let item, let outcome):
                // The lifecycle alone decides that this is its one outcome.
                guard finish(item.id, outcome) else { continue }
                effects += deactivate(item.id, now: now)
                preemptedFor = preemptedFor.filter { $0.value != item.id && $0.key != item.id }
                let played = meter.lastPlay(of: item.id)
                let event = Event(.finished, time: now, id: item.id, path: item.clip.path, priority: item.priority,
                                  reason: outcome.reason.map { EventReason($0) }, heard: seconds(item.heardFrames, of: item.id),
                                  duration: seconds(item.totalFrames, of: item.id), outcome: outcome, device: played?.devices.description,
                                  format: played?.format, frames: played?.frames, warning: played?.warning)
                meter.forget(item.id)
                downloads?.stop(item.id)
                do { try spool.finish(item, event: event) } catch { logger.error("\(error.description)") }
                logger.info("\(item.id) \(item.clip.path): \(outcome.kind.rawValue)\(outcome.reason.map { " (\($0))" } ?? "")")
                // Held until its own device closes (a multi-route play: the first such device).
                if let device = played?.devices.names.first(where: {
                    $0 != configuration.device && devices.open.contains($0) }) {
                    hub.emit(event, whenClosed: device)
                } else {
                    hub.emit(event)
                }
            }
        }
        if let playing = scheduler.playing {
            // The device stays open for the next item, so nothing is left to wait for.
            hub.release(playing.clip.device ?? configuration.device)
        }
        scheduleDeviceClose(now: now)
    }

    /// Ends `id`'s lifecycle with `outcome`: true once, when it is to be announced. The final
    /// lifecycle goes at once: ids are never reused (`newID` skips the spool's outcomes, and
    /// lifecycles are made only as items are accepted or restored), so an id without one is
    /// final or unknown, and every event asks `lifecycles` first: nothing follows the outcome.
    func finish(_ id: String, _ outcome: Outcome) -> Bool {
        guard lifecycles[id]?.finish(outcome) == true else { return false }
        lifecycles[id] = nil
        return true
    }

    func seconds(_ frames: Int64?, of id: String) -> Double? {
        meter.seconds(frames, of: id)
    }

    /// One report from the engine driver.
    func handle(_ report: EngineReport) {
        let now = clock()
        switch report {
        case .started(let id, let device, let format, let buffering, let rate, let total):
            meter.started(id, rate: rate)
            if devices.opened(device) {
                logger.info("device '\(device)' opened as \(format), \(buffering)")
                hub.emit(Event(.deviceOpened, time: now, device: device, format: format))
            }
            // Announced once per play: a multi-route play reports a start per device.
            guard let item = item(id), let heard = lifecycles[id]?.heard(stillInterrupted: policy[id]?.isInterrupted == true) else {
                return
            }
            if scheduler.playing?.id == id {
                meter.playingTotal = total
            } else if mixed[id] != nil, let total {
                mixed.progress(id, frames: 0, counted: total)  // its length for status and the quarter marks
            }
            // The device works: whatever waited for it is over.
            if devices.works(device) {
                logger.info("device '\(device)' is back")
                hub.emit(Event(.routeChange, time: now, reason: .newDeviceAvailable, device: device, format: format))
            }
            if heard.endsInterruption {
                hub.emit(Event(.interruptionEnded, time: now, id: id, path: item.clip.path, priority: item.priority, shouldResume: true))
            }
            logger.info("\(id) \(item.clip.path): started on \(device) as \(format)")
            hub.emit(Event(.started, time: now, id: id, path: item.clip.path, priority: item.priority,
                       heard: seconds(item.heardFrames, of: id), duration: seconds(total, of: id), device: device, format: format))
        case .progress(let id, let frames, _, let counted):
            // An estimated length, counted exactly after the start.
            if let counted, scheduler.playing?.id == id { meter.playingTotal = counted }
            // Ten reports a second per stream: nothing is built unless someone listens.
            let heardBefore: Int64, total: Int64?
            if let stream = mixed[id] {
                mixed.progress(id, frames: frames, counted: counted)
                (heardBefore, total) = (stream.item.heardFrames, counted ?? stream.item.totalFrames)
            } else if let playing = scheduler.playing, playing.id == id {
                meter.playingFrames = frames
                (heardBefore, total) = (playing.heardFrames, meter.playingTotal)
                if meter.checkpointDue(id, now: now) { checkpoint(playing, heard: playing.heardFrames + frames) }
            } else {
                return
            }
            let heard = heardBefore + frames
            let milestone = meter.newMark(id, heard: heard, total: total)
            hub.publishProgress(of: id, milestone: milestone) {
                Event(.progress, time: now, id: id, heard: seconds(heard, of: id), duration: seconds(total, of: id))
            }
        case .ended(let id, let heard, let total, let rate, var end, let played):
            Self.rotateLog(runtime, logger)
            meter.ended(id, rate: rate, details: played)
            lifecycles[id]?.playEnded()
            if case .failed(_, let message) = end { logger.warning("\(message)") }
            if mixed[id] != nil {
                return mixedEnded(id, heard: heard, total: total, end: end, details: played, now: now)
            }
            meter.playingFrames = heard
            if case .failed = end, let item = scheduler.playing, item.id == id,
               let hold = deviceTrouble(played, item: item, now: now) {
                end = .held(hold)  // back to the head of the queue; the device is tried again
            }
            apply(scheduler.playbackEnded(id: id, heardFrames: heard, totalFrames: total, heardFraction: played.heardFraction,
                                          end: end, now: now), now: now)
        case .devicesClosed(let closed):
            for device in closed where devices.closed(device) {
                hub.emit(Event(.deviceClosed, time: now, device: device))
                hub.release(device)
            }
        case .title(let id, let title):
            streamTitleChanged(id, title: title, now: now)
        case .otherAudio(let scene):
            otherAudioChanged(scene, now: now)
        case .otherAudioLooked(let scene):
            answerStatus(otherAudio: scene)
        }
    }

    static func describe(_ reason: StopReason) -> EventReason {
        switch reason {
        case .preempted(let by): .preempted(by: by)
        case .paused: .paused
        case .held(let why): why.reason
        case .skipped: .other("skipped")
        case .cancelled: .other("cancelled")
        case .replaced(let by): .other("replaced by \(by)")
        case .stopped: .other("stopped")
        }
    }

    /// The playing item's position, written to the spool as if it had been interrupted there:
    /// what a restart after a SIGKILL resumes from. The scheduler's own copy is unchanged.
    private func checkpoint(_ item: QueueItem, heard: Int64) {
        var spooled = item
        spooled.heardFrames = heard
        spooled.interrupted = true
        do { try spool.save(spooled) } catch { logger.error("\(error.description)") }
    }
}
