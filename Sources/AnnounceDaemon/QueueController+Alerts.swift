import AnnounceEngine
import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// System sounds (DESIGN §3, System sounds): an alert joins the mixed lane at once.
extension QueueController {
    /// `announce alert`: a system sound, mixed over everything at once; never queued, never
    /// preempted, not ducked, not spooled. Quiet mode silences it unless `ignoreQuiet`.
    /// Its values are already checked (`Request.problem`).
    /// `media`: the system queue's copy of the handed sound (DESIGN §8), deleted with its outcome.
    /// True when it was accepted (it plays, or quiet mode ended it).
    @discardableResult
    func handleAlert(
        _ alert: AlertRequest, media: String? = nil, owner: ItemOwner? = nil, wait: Bool, from connection: Connection,
        now: Double
    ) -> Bool {
        var passed: Set<DeviceName> = []
        if let failure = deviceFailure(
            [alert.device ?? configuration.device], environment: alert.environment, passed: &passed)
        {
            connection.sendAndClose(WireProtocol.encode(Reply.failure(failure.exitCode, failure.description)))
            return false
        }
        // At once or not at all: a busy device fails it (69) instead of making it wait.
        // A night level lowers it here: it is not spooled, and --ignore-quiet is not kept.
        let quietNow = alert.ignoreQuiet == true ? nil : quiet.treatment(at: now)
        let night = quietNow?.decibels.map { Float(pow(10, $0 / 20)) } ?? 1
        var clip = Clip(
            path: alert.path, device: alert.device, gain: min(alert.gain * night, Limits.gain.upperBound),
            environment: alert.environment)
        clip.pathBytes = alert.pathBytes
        clip.loudness = alert.loudness
        clip.media = media
        var item = QueueItem(
            id: newID(), clip: clip, priority: .high, arrival: now, session: AudioSession(category: .ambient),
            ifBusy: .fail)
        item.owner = owner
        if let owner { hub.owners[item.id] = owner }
        lifecycles[item.id] = ItemLifecycle()
        lanes.mixed.add(item, alert: true)
        connection.send(WireProtocol.encode(Reply.ids([item.id])))
        if wait { subscribe(connection, to: [item.id], progress: false) }
        if quietNow == .silent {
            endMixed(item.id, .quietMode, now: now)
            return true
        }
        playMixed(item.id)
        return true
    }
}
