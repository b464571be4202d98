import AnnounceModel
import AnnounceSystem

/// Other applications' audio as it bears on announce's session (DESIGN §3, Interruptions from
/// other applications, Other audio playing): a call interrupts every playing item and holds the
/// queue until it ends; `--if-other-audio` decides how an item starts while other audio plays.
/// What is seen is `OtherAudioWatcher`'s; what it means is `OtherAudioScene`'s and `IfOtherAudio`'s.
extension QueueController {
    /// What an item about to start on the main lane does.
    enum StartChoice {
        /// Plays as this item (its session may duck others now).
        case play(QueueItem)
        /// Does not start: the scheduler's effects of declining it.
        case decline([SchedulerEffect])
    }

    /// The watcher watches the server the item that plays (or plays next) reaches while announce
    /// has something to play, and stops when it has nothing. Called each time the control thread wakes.
    func watchOtherApplications() {
        guard let otherAudioWatcher else { return }
        let item = lanes.main.playing ?? lanes.main.nextReady ?? lanes.mixed.all.first(where: { !$0.isAlert })?.item
        otherAudioWatcher.watch(
            item != nil, environment: item?.clip.environment, interruptingRoles: configuration.interruptingRoles)
        // An item that waited for other audio to stop is no longer first (it expired, was cancelled, or
        // one of higher priority came): the hold was its, and goes.
        if lanes.main.holds.contains(.otherAudio), lanes.main.nextReady?.ifOtherAudio != .wait {
            let now = clock()
            carryOut(lanes.main.release(.otherAudio, now: now), now: now)
        }
    }

    /// What other applications play now on the server `environment` reaches: the watcher's when it
    /// watches that server, else one look (bounded, as a device check). Nil: no sound server answers.
    func otherAudioNow(for environment: [String: String]?) -> OtherAudioScene? {
        guard let otherAudioWatcher else { return nil }
        if let seen = otherAudioWatcher.scene(for: environment) { return seen }
        return OtherAudioWatcher.look(environment: environment, interruptingRoles: configuration.interruptingRoles)
    }

    /// The watcher saw a change (nil: it stopped watching, or no sound server answers).
    func otherAudioChanged(_ scene: OtherAudioScene?, now: Double) {
        let before = otherAudioScene
        otherAudioScene = scene
        switch (scene ?? OtherAudioScene()).callChange(from: before) {
        case .began(let by)?: beginCall(by: by, now: now)
        case .ended?: endCall(now: now)
        case nil: break
        }
        if scene?.isOtherAudioPlaying != true, lanes.main.holds.contains(.otherAudio) {
            carryOut(lanes.main.release(.otherAudio, now: now), now: now)
        }
    }

    /// A main-lane item's session is about to start (also one restored with what was heard): a
    /// call announce did not know of yet holds it; otherwise, on its first start, its
    /// `--if-other-audio` decides.
    func otherAudioStart(_ item: QueueItem, now: Double) -> StartChoice {
        guard otherAudioWatcher != nil else { return .play(item) }
        let scene = otherAudioNow(for: item.clip.environment)
        if let call = scene?.call {
            if otherAudioScene?.call == nil {
                otherAudioScene = scene
                beginCall(by: call, now: now, starting: item)
            }
            return .decline(
                lanes.main.playbackEnded(id: item.id, heardFrames: 0, totalFrames: nil, end: .held(.call), now: now))
        }
        guard item.heardFrames == 0 else { return .play(item) }
        switch (item.ifOtherAudio ?? .play).start(otherAudioPlaying: scene?.isOtherAudioPlaying) {
        case .play:
            return .play(item)
        case .playDucking:
            var ducking = item
            ducking.session = item.audioSession
            ducking.session?.options.duckOthers = true
            return .play(ducking)
        case .wait:
            // for the waiting clients, before the watcher's first look
            if otherAudioScene == nil { otherAudioScene = scene }
            logger.info(
                "\(item.id) \(item.clip.path): waits, other audio plays (\(scene?.playing.joined(separator: ", ") ?? ""))"
            )
            return .decline(
                lanes.main.playbackEnded(
                    id: item.id, heardFrames: 0, totalFrames: nil, end: .held(.otherAudio), now: now))
        case .silence(let reason):
            return .decline(
                lanes.main.playbackEnded(
                    id: item.id, heardFrames: 0, totalFrames: nil,
                    end: .silenced(reason: reason), now: now))
        }
    }

    /// A mixable item is about to start: as `otherAudioStart` (its `wait` is refused on acceptance).
    /// Nil: it plays (ducking others when `duck` says so, the item returned); a reason: it ends silenced.
    func otherAudioStartMixed(_ item: QueueItem) -> (item: QueueItem, silenced: String?) {
        guard otherAudioWatcher != nil else { return (item, nil) }
        let scene = otherAudioNow(for: item.clip.environment)
        if let call = scene?.call, otherAudioScene?.call == nil {
            otherAudioScene = scene
            beginCall(by: call, now: clock())
        }
        switch (item.ifOtherAudio ?? .play).start(otherAudioPlaying: scene?.isOtherAudioPlaying) {
        case .playDucking:
            var ducking = item
            ducking.session = item.audioSession
            ducking.session?.options.duckOthers = true
            return (ducking, nil)
        case .silence(let reason): return (item, reason)
        case .play, .wait: return (item, nil)
        }
    }

    /// `status`, with whether other audio plays and the call that holds announce: at once from
    /// what the watcher sees, else once its look comes (`answerStatus(otherAudio:)`): the control
    /// thread never waits for a sound server.
    func answerStatus(_ connection: Connection) {
        let item = lanes.main.playing ?? lanes.main.nextReady ?? lanes.mixed.all.first(where: { !$0.isAlert })?.item
        guard let otherAudioWatcher else {
            return connection.send(WireProtocol.encode(Reply.status(status().view(for: connection.caller))))
        }
        if let seen = otherAudioWatcher.scene(for: item?.clip.environment) {
            return connection.send(
                WireProtocol.encode(Reply.status(status(otherAudio: seen).view(for: connection.caller))))
        }
        statusWaiting.append(connection)
        if statusWaiting.count == 1 {
            otherAudioWatcher.lookSoon(
                environment: item?.clip.environment, interruptingRoles: configuration.interruptingRoles)
        }
    }

    /// The look `answerStatus` asked for came: every status waiting for it is answered.
    func answerStatus(otherAudio scene: OtherAudioScene?) {
        let waiting = statusWaiting
        statusWaiting = []
        guard !waiting.isEmpty else { return }
        let status = status(otherAudio: scene)
        let reply = WireProtocol.encode(Reply.status(status))
        for connection in waiting {
            connection.send(
                connection.caller == nil
                    ? reply : WireProtocol.encode(Reply.status(status.view(for: connection.caller))))
        }
    }

    /// The status with `scene` (nil: no sound server answers) and the call that holds announce.
    private func status(otherAudio scene: OtherAudioScene?) -> DaemonStatus {
        var status = status()
        guard let scene else { return status }
        status.otherAudioPlaying = scene.isOtherAudioPlaying
        status.otherAudioStreams = scene.playing.isEmpty ? nil : scene.playing
        status.call = otherAudioScene?.call
        return status
    }

    /// A mixed stream a call keeps paused.
    func heldByCall(_ id: ItemID) -> Bool { callInterrupted.contains(id) }
}
