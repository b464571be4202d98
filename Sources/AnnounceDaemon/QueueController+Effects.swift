import AnnounceEngine
import AnnounceModel
import AnnounceSystem

/// The models' effects carried out, and the engine driver's reports taken in.
extension QueueController {
    /// Quiet mode silences `item` now (it ends `silenced`): on, silent, and for its category.
    func quietSilences(_ item: QueueItem, now: Double) -> Bool {
        item.sessionCategory.silencedByQuietMode && quiet.treatment(at: now) == .silent
    }

    /// How many dB quiet mode's night level lowers `item` now; nil: it plays as it is.
    func nightLevel(_ item: QueueItem, now: Double) -> Double? {
        item.sessionCategory.silencedByQuietMode ? quiet.treatment(at: now)?.decibels : nil
    }

    func carryOut(_ effects: [SchedulerEffect], now: Double) {
        // A worklist rather than recursion: an item silenced by quiet mode brings the
        // the scheduler's next effects, which may silence the next item, and so on.
        var effects = SchedulerEffect.playsFirst(effects)
        var next = 0
        while next < effects.count {
            let effect = effects[next]
            next += 1
            switch effect {
            case .persist(let item):
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .play(let item) where quietSilences(item, now: now):
                // Never reaches the engines: it ends `silenced` and the next item is offered.
                effects += lanes.main.playbackEnded(
                    id: item.id, heardFrames: 0, totalFrames: nil,
                    end: .silenced(reason: "quiet mode"), now: now)
            case .play(let item):
                applyDucking(policy.setSuspended(item.id, false))
                if let stream = policy[item.id], !stream.isPlaying {
                    // Left paused by a --no-notify-others session (or still interrupted): it waits
                    // at the head of the queue for `announce resume`.
                    effects += lanes.main.playbackEnded(
                        id: item.id, heardFrames: 0, totalFrames: nil,
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
                    effects += activate(item, preempting: lanes.preemptedFor.removeValue(forKey: item.id), now: now)
                }
                devices.playStarts()
                meter.playingTotal = item.totalFrames
                meter.playingFrames = 0
                lifecycles[item.id]?.start()
                let tuning = configuration.tuning(for: item, nightLevel: nightLevel(item, now: now))
                // On the system queue, through the listener's own daemon when one is connected (DESIGN §8).
                if item.clip.device == nil, item.clip.extraDevices == nil, let route = listenerRoute,
                    route.play(item, media: spool.media, tuning: tuning, now: now)
                {
                } else {
                    driver.play(
                        item, devices: item.clip.devices(default: configuration.device), gain: startingGain(item.id),
                        watched: hub.isProgressWatched(item.id), tuning: tuning)
                }
                // Started items never expire, also after a crash; saved after the play began.
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .stopPlayback(let id, _):
                stopPlay(id)
            case .interrupted(let item, let reason):
                switch reason {
                case .preempted(let by): lanes.preemptedFor[by] = item.id
                case .held, .paused:
                    // Silent until it plays again: it ducks no one meanwhile.
                    applyDucking(policy.setSuspended(item.id, true))
                default: break
                }
                // Interruptions the daemon announced itself (sessions, the device) are not repeated.
                if lifecycles[item.id]?.interrupt() == true {
                    hub.emit(
                        Event(
                            time: now,
                            .interruptionBegan(
                                EventItem(item), reason: Self.describe(reason),
                                heard: seconds(item.heardFrames, of: item.id),
                                warning: reason == .held(.call) ? otherAudioScene?.call : nil)))
                }
            case .finish(let item, let outcome):
                // The lifecycle alone decides that this is its one outcome.
                guard finish(item.id, outcome) else { continue }
                effects += deactivate(item.id, now: now)
                lanes.preemptedFor = lanes.preemptedFor.filter { $0.value != item.id && $0.key != item.id }
                let played = meter.lastPlay(of: item.id)
                let event = Event(
                    time: now,
                    .finished(
                        EventItem(item), outcome: outcome, reason: outcome.reason.map { EventReason($0) },
                        heard: seconds(item.heardFrames, of: item.id), duration: seconds(item.totalFrames, of: item.id),
                        device: played?.devices.description, format: played?.format, frames: played?.frames,
                        warning: played?.warning))
                meter.forget(item.id)
                downloads?.stop(item.id)
                do { try spool.finish(item, event: event) } catch { logger.error("\(error.description)") }
                logger.info(
                    "\(item.id) \(item.clip.path): \(outcome.kind.rawValue)\(outcome.reason.map { " (\($0))" } ?? "")")
                // Held until its own device closes (a multi-route play: the first such device):
                // what it wrote is heard by then. One that wrote nothing is told at once.
                if let played, played.frames > 0,
                    let device = played.devices.names.first(where: {
                        $0 != configuration.device && devices.open.contains($0)
                    })
                {
                    hub.emit(event, whenClosed: device)
                } else {
                    hub.emit(event)
                }
            }
        }
        if let playing = lanes.main.playing {
            // The device stays open for the next item, so nothing is left to wait for.
            hub.release(playing.clip.device ?? configuration.device)
        }
        scheduleDeviceClose(now: now)
    }

    /// Ends `id`'s lifecycle with `outcome`: true once, when it is to be announced. The final
    /// lifecycle goes at once: ids are never reused (`newID` skips the spool's outcomes, and
    /// lifecycles are made only as items are accepted or restored), so an id without one is
    /// final or unknown, and every event asks `lifecycles` first: nothing follows the outcome.
    func finish(_ id: ItemID, _ outcome: Outcome) -> Bool {
        guard lifecycles[id]?.finish(outcome) == true else { return false }
        lifecycles[id] = nil
        return true
    }

    /// Stops a play wherever it plays: on a listener's daemon, or the engines.
    func stopPlay(_ id: ItemID) {
        if listenerRoute?.stop(id, now: terminating) != true { driver.stop(id) }
    }

    func seconds(_ frames: Int64?, of id: ItemID) -> Double? {
        meter.seconds(frames, of: id)
    }
}
