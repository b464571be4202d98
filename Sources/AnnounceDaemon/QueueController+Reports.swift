import AnnounceEngine
import AnnounceModel
import AnnounceSystem

/// The engine driver's reports taken in: a play started, its progress, its end, devices closed,
/// a stream's title, and what other applications play.
extension QueueController {
    /// One report from the engine driver.
    func handle(_ report: EngineReport) {
        let now = clock()
        switch report {
        case .started(let id, let device, let format, let buffering, let rate, let total):
            meter.started(id, rate: rate)
            if devices.opened(device) {
                logger.info("device '\(device)' opened as \(format), \(buffering)")
                hub.emit(Event(time: now, .deviceOpened(device: device.rawValue, format: format)))
            }
            // Announced once per play: a multi-route play reports a start per device.
            guard let item = item(id),
                let heard = lifecycles[id]?.heard(stillInterrupted: policy[id]?.isInterrupted == true)
            else {
                return
            }
            if lanes.main.playing?.id == id {
                meter.playingTotal = total
            } else if lanes.isMixed(id), let total {
                lanes.mixed.progress(id, frames: 0, counted: total)  // its length for status and the quarter marks
            }
            // The device works: whatever waited for it is over.
            if devices.works(device) {
                logger.info("device '\(device)' is back")
                hub.emit(
                    Event(time: now, .routeChange(reason: .newDeviceAvailable, device: device.rawValue, format: format))
                )
            }
            if heard.endsInterruption {
                hub.emit(
                    Event(time: now, .interruptionEnded(EventItem(item), shouldResume: true)))
            }
            logger.info("\(id) \(item.clip.path): started on \(device) as \(format)")
            hub.emit(
                Event(
                    time: now,
                    .started(
                        EventItem(item),
                        heard: seconds(item.heardFrames, of: id), duration: seconds(total, of: id),
                        device: device.rawValue, format: format)))
        case .progress(let id, let frames, _, let counted):
            // An estimated length, counted exactly after the start.
            if let counted, lanes.main.playing?.id == id { meter.playingTotal = counted }
            // Ten reports a second per stream: nothing is built unless someone listens.
            let heardBefore: Int64
            let total: Int64?
            if let stream = lanes.mixed[id] {
                lanes.mixed.progress(id, frames: frames, counted: counted)
                (heardBefore, total) = (stream.item.heardFrames, counted ?? stream.item.totalFrames)
            } else if let playing = lanes.main.playing, playing.id == id {
                meter.playingFrames = frames
                (heardBefore, total) = (playing.heardFrames, meter.playingTotal)
                if meter.checkpointDue(id, now: now) { checkpoint(playing, heard: playing.heardFrames + frames) }
            } else {
                return
            }
            let heard = heardBefore + frames
            let milestone = meter.newMark(id, heard: heard, total: total)
            hub.publishProgress(of: id, milestone: milestone) { percent in
                Event(
                    time: now,
                    .progress(
                        EventItem(id), heard: seconds(heard, of: id), duration: seconds(total, of: id), percent: percent
                    ))
            }
        case .ended(let id, let heard, let total, let rate, var end, let played):
            Self.rotateLog(runtime, logger)
            meter.ended(id, rate: rate, details: played)
            lifecycles[id]?.playEnded()
            if case .failed(_, let message) = end { logger.warning("\(message)") }
            if lanes.isMixed(id) {
                return mixedEnded(id, heard: heard, total: total, end: end, details: played, now: now)
            }
            meter.playingFrames = heard
            if case .failed = end, let item = lanes.main.playing, item.id == id,
                let hold = deviceTrouble(played, item: item, now: now)
            {
                end = .held(hold)  // back to the head of the queue; the device is tried again
            }
            carryOut(
                lanes.main.playbackEnded(
                    id: id, heardFrames: heard, totalFrames: total, heardFraction: played.heardFraction,
                    end: end, now: now), now: now)
        case .devicesClosed(let closed):
            for device in closed where devices.closed(device) {
                hub.emit(Event(time: now, .deviceClosed(device: device.rawValue)))
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
    /// what a restart after a SIGKILL resumes from. The the scheduler's own copy is unchanged.
    private func checkpoint(_ item: QueueItem, heard: Int64) {
        var spooled = item
        spooled.heardFrames = heard
        spooled.interrupted = true
        do { try spool.save(spooled) } catch { logger.error("\(error.description)") }
    }
}
