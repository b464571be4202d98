import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What the queue looks like to a client: `status`, and why a waiting client's item has not
/// started (`waiting` events, docs/protocol.md), sent to clients that show progress whenever
/// the reason changes, so a terminal is never silent.
extension QueueController {
    /// `announce status`: both lanes, holds, quiet mode and the daemon itself.
    func status() -> DaemonStatus {
        func describe(_ item: QueueItem, _ state: ItemStatus.State) -> ItemStatus {
            var status = ItemStatus(item, state)
            if item.heardFrames > 0 { status.heard = seconds(item.heardFrames, of: item.id) }
            if policy[item.id]?.ducked == true { status.ducked = true }
            status.title = meter.titles[item.id]
            return status
        }
        var playing = lanes.main.playing.map { describe($0, .playing) }
        if let item = lanes.main.playing {
            playing?.heard = seconds(item.heardFrames + meter.playingFrames, of: item.id)
            playing?.duration = seconds(meter.playingTotal, of: item.id)
        }
        var status = DaemonStatus(
            pid: getpid(), device: configuration.device, deviceOpen: !devices.open.isEmpty,
            paused: lanes.main.isPaused, playing: playing,
            queued: lanes.main.ready.map {
                describe($0, lifecycles[$0.id]?.isInterrupted == true ? .interrupted : .queued)
            },
            scheduled: lanes.main.scheduled.map { describe($0, .scheduled) },
            quiet: quiet.state(at: clock()))
        let streams = lanes.mixed.all.map { stream in
            // A mixed stream is never queued: when it does not play, it waits, interrupted.
            var entry = describe(stream.item, lifecycles[stream.item.id]?.isPlaying == true ? .playing : .interrupted)
            entry.heard = seconds(stream.item.heardFrames + stream.frames, of: stream.item.id)
            entry.duration = seconds(stream.item.totalFrames, of: stream.item.id)
            return entry
        }
        status.mixing = streams.isEmpty ? nil : streams
        status.holds = lanes.main.holds.isEmpty ? nil : lanes.main.holds.sorted().map(\.reason)
        if lanes.main.isPaused { status.pausedSince = runtime.pausedSince }
        status.idleExit = configuration.idleExit
        status.autoStarted = configuration.ready != nil ? true : nil  // clients start daemons with a ready pipe
        status.sessionBus = sessionBus?.description
        status.otherAudio = ducker?.status
        return status
    }

    /// Tells the bus thread what announce shows as a player and whether other players stay paused.
    func showOnSessionBus() {
        guard let sessionBus, sessionBus.isOnBus else { return }
        let active = OtherPlayers.nonMixableActive(
            mainLanePlaying: lanes.main.playing != nil, queuePaused: lanes.main.isPaused,
            mainLaneWaiting: lanes.main.nextReady != nil)
        if let playing = lanes.main.playing {
            mainLaneNotifiesOthers = playing.audioSession.options.notifyOthersOnDeactivation
        }
        sessionBus.show(NowPlaying(status()), nonMixableActive: active, notifyOthers: mainLaneNotifiesOthers)
    }

    func reportWaits(now: Double) {
        let watchers = hub.waitWatchers
        guard !watchers.isEmpty else { return }
        let ready = lanes.main.ready
        let scheduled = lanes.main.scheduled
        for connection in watchers {
            connection.reportedWaits = connection.reportedWaits.filter { connection.waiting.contains($0.key) }
            for id in connection.waiting {
                // The last one is kept while it plays: a busy device's retries are not news.
                guard let event = waitingEvent(for: id, ready: ready, scheduled: scheduled, now: now),
                    connection.reportedWaits[id].map({ !Self.sameWait($0, event) }) ?? true
                else { continue }
                connection.reportedWaits[id] = event
                connection.send(WireProtocol.encode(connection.view(of: event.owned(by: hub.owners[id]))))
            }
        }
    }

    /// The reason `id` waits, or nil when it plays (or is not known here).
    func waitingEvent(for id: ItemID, ready: [QueueItem], scheduled: [QueueItem], now: Double) -> Event? {
        func waiting(
            _ reason: EventReason, _ item: QueueItem, ahead: Int? = nil, wait: Double? = nil, at: Double? = nil,
            warning: String? = nil
        ) -> Event {
            Event(
                time: now, .waiting(EventItem(item), reason: reason, ahead: ahead, wait: wait, at: at, warning: warning)
            )
        }
        if let stream = lanes.mixed[id] {
            switch stream.waiting {
            case nil: return nil
            case .interrupted? where heldByCall(id): return waiting(.call, stream.item, warning: otherAudioScene?.call)
            case .interrupted?: return waiting(.held, stream.item)
            case .device?:
                let wait = devices.waitReason(for: stream.item.clip.devices(default: configuration.device))
                return waiting(wait.reason, stream.item, warning: wait.warning)
            }
        }
        if let item = scheduled.first(where: { $0.id == id }) { return waiting(.scheduled, item, at: item.eligibleAt) }
        guard let position = ready.firstIndex(where: { $0.id == id }) else { return nil }
        let item = ready[position]
        if lanes.main.isPaused { return waiting(.paused, item) }
        switch lanes.main.holds.min() {  // the hold told first (QueueHold's order)
        case .deviceBusy?: return waiting(.deviceBusy, item, warning: devices.busyReason)
        case .deviceLost?: return waiting(.deviceLost, item)
        case .call?: return waiting(.call, item, warning: otherAudioScene?.call)
        case .otherAudio?:
            return waiting(.otherAudioPlaying, item, warning: otherAudioScene?.playing.joined(separator: ", "))
        case let hold?: return waiting(.held, item, warning: hold.description)
        case nil: break
        }
        let ahead = ready[..<position]
        return waiting(
            .queued, item, ahead: ahead.count + (lanes.main.playing == nil ? 0 : 1), wait: secondsLeft(ahead))
    }

    /// About how long the playing item and `ahead` still play, in wall time (frames heard are
    /// source time, `clip.seconds` wall time: --rate tells them apart); nil when one's length is unknown.
    private func secondsLeft(_ ahead: ArraySlice<QueueItem>) -> Double? {
        var total = 0.0
        if let playing = lanes.main.playing {
            let clip = playing.clip
            // The engine's length once known (counted, or what decoded) over the client's.
            guard let length = seconds(meter.playingTotal, of: playing.id).map(clip.wallSeconds) ?? clip.seconds else {
                return nil
            }
            total += max(
                0,
                length
                    - clip.wallSeconds(
                        forSource: seconds(playing.heardFrames + meter.playingFrames, of: playing.id) ?? 0))
        }
        for item in ahead {
            guard let length = item.clip.seconds else { return nil }
            total += max(0, length - item.clip.wallSeconds(forSource: seconds(item.heardFrames, of: item.id) ?? 0))
        }
        return (total * 10).rounded() / 10
    }

    /// The same wait as far as a person can tell (the estimate alone changing is no news).
    private static func sameWait(_ a: Event, _ b: Event) -> Bool {
        a.reason == b.reason && a.ahead == b.ahead && a.at == b.at && a.warning == b.warning
    }
}
