import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem
import AnnounceOutput

/// The requests: one handler each, taking the request and the connection it came on.
extension QueueController {
    /// One request line: decoded, checked, and handed to its handler.
    func handle(_ line: ArraySlice<UInt8>, from connection: Connection) {
        let request: Request
        do {
            request = try Request(line: line)
        } catch {
            return reject(connection, error.description)
        }
        // Its client gave up (a stopped daemon told it "not done", exit 69) and left: doing it
        // now would make a retry do it twice. Reading requests are moot; a cancel is always
        // safe (it ends what its own client queued: the Ctrl-C handler sends one and exits).
        if ![.cancel, .status, .wait, .events].contains(request.operation), connection.peerHungUp {
            return logger.warning("dropped the \(request.operation.rawValue) request of a client that already left")
        }
        // The values no client is trusted with, by the rules the client checked before sending.
        if let problem = request.problem { return reject(connection, problem) }
        let now = clock()
        switch request {
        case .play(let play): handlePlay(play, from: connection, now: now)
        case .alert(let alert, let wait): handleAlert(alert, wait: wait, from: connection, now: now)
        case .wait(let ids, let progress): wait(for: ids, progress: progress, connection: connection)
        case .status: answerStatus(connection)
        case .skip, .pause, .resume, .stop:
            controlQueue(request, now: now)
            connection.send(WireProtocol.encode(Reply.done))
        case .clear: control(connection, scheduler.clear(now: now), now: now)
        case .cancel(let target): handleCancel(target, from: connection, now: now)
        case .events:
            connection.subscribed = true
            connection.send(WireProtocol.encode(Reply.done))
        case .quiet(let position): handleQuiet(position, from: connection, now: now)
        }
    }

    /// skip, pause, resume and stop, asked by a client or over the session bus (MPRIS).
    func controlQueue(_ request: Request, now: Double) {
        switch request {
        case .skip: apply(scheduler.skip(now: now), now: now)
        case .pause:
            setPausedMarker(true)
            apply(scheduler.pause(now: now), now: now)
            hub.emit(Event(.paused, time: now))
        case .resume:
            setPausedMarker(false)
            apply(resumeAwaiting(now: now) + scheduler.resume(now: now), now: now)
            hub.emit(Event(.resumed, time: now))
        case .stop:
            for id in mixed.ids.sorted() { endMixed(id, .stopped, now: now) }
            apply(scheduler.stop(now: now), now: now)
        default: break
        }
    }

    /// An MPRIS control a client sent over the session bus: what `announce` itself would ask.
    func handle(_ control: PlayerControl) {
        let request = NowPlaying.request(for: control, paused: scheduler.isPaused)
        logger.info("MPRIS \(control.rawValue): \(request.operation.rawValue)")
        controlQueue(request, now: clock())
    }

    /// `announce cancel`: by tag, or by ids (the unknown ones are named in the reply).
    private func handleCancel(_ target: CancelTarget, from connection: Connection, now: Double) {
        switch target {
        case .tag(let tag):
            carryOut(mixed.end(where: { $0.tag == tag }, .cancelled), now: now)
            control(connection, scheduler.cancel(tag: tag, now: now), now: now)
        case .ids(let ids):
            for id in ids where mixed[id] != nil { endMixed(id, .cancelled, now: now) }
            let (effects, unknown) = scheduler.cancel(ids: ids.filter { mixed[$0] == nil }, now: now)
            apply(effects, now: now)
            connection.send(WireProtocol.encode(Reply.cancelled(unknown: unknown)))
        }
    }

    /// `announce quiet on|off|until`: takes effect for the next item that starts; the one
    /// playing now goes on. Saved in the runtime directory so a restart keeps it.
    private func handleQuiet(_ position: QuietRequest, from connection: Connection, now: Double) {
        let setting: QuietSetting
        do { setting = try position.setting(at: now) } catch { return reject(connection, error.description) }
        // Kept across restarts or not taken at all: a switch that a restart would forget is refused.
        do { try runtime.saveQuietSetting(setting) } catch {
            logger.error("\(error.description)")
            return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "quiet mode not changed: \(error.description)")))
        }
        quiet.setting = setting
        let state = quiet.state(at: now)
        logger.info("quiet \(setting.kind.rawValue): quiet mode is \(state.quiet ? "on" : "off") (\(state.reason))")
        hub.emit(Event(.quiet, time: now, reason: .other(state.reason), quiet: state.quiet, state: setting.kind, until: state.until))
        connection.send(WireProtocol.encode(Reply.done))
    }

    func reject(_ connection: Connection, _ message: String) {
        connection.sendAndClose(WireProtocol.encode(Reply.refusal(message)))
    }

    private func control(_ connection: Connection, _ effects: [SchedulerEffect], now: Double) {
        apply(effects, now: now)
        connection.send(WireProtocol.encode(Reply.done))
    }

    /// `play`, its values already checked (`Request.problem`).
    private func handlePlay(_ request: PlayRequest, from connection: Connection, now: Double) {
        // Sent again: the daemon before this one spooled it, and died before it answered.
        if let key = request.key, let ids = restoredRequests[key] {
            logger.info("a play request sent again after a restart: its \(ids.count) item(s) were restored")
            let pending = pendingIDs
            let waitsForResume = scheduler.isPaused && ids.contains { mixed[$0] == nil && pending.contains($0) }
            connection.send(WireProtocol.encode(Reply.ids(ids, pausedSince: waitsForResume ? runtime.pausedSince ?? now : nil)))
            if request.wait { subscribe(connection, to: ids, progress: request.progress) }
            return
        }
        var items: [(QueueItem, Bool)] = []
        var passed: Set<String> = []  // devices checked for this request: each once, not per item
        for (index, itemRequest) in request.items.enumerated() {
            // A missing device is the daemon's own: it must not come twice either.
            let devices = itemRequest.clip.devices(default: configuration.device)
            if Set(devices).count != devices.count {
                return reject(connection, "items[\(index)]: device \(configuration.device) (the daemon's) is given twice")
            }
            // A device that cannot play fails the request now: nothing queued, nothing preempted.
            if let failure = deviceFailure(devices, environment: itemRequest.clip.environment, passed: &passed) {
                return connection.sendAndClose(WireProtocol.encode(Reply.failure(failure.exitCode, failure.description)))
            }
            var item = QueueItem(request: itemRequest, id: newID(), now: now)
            item.requestKey = request.key
            // A URL's body is downloaded into the media directory under a name the daemon gives.
            if item.clip.url != nil { item.clip.media = MediaDirectory.newName() }
            // `play --tag T --replace a b` replaces older T items, not its own first file.
            let replaces = (itemRequest.replace ?? false) && !items.contains { $0.0.tag == item.tag && $0.1 }
            items.append((item, replaces))
        }
        // All or nothing across a crash too: uncommitted until every item is spooled.
        do { try spool.beginRequest(items.map(\.0.id), key: request.key) } catch {
            logger.error("\(error.description)")
            return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the request: \(error.description)")))
        }
        defer { spool.endRequest() }
        var ids: [String] = []
        for (item, replace) in items {
            if replace, let tag = item.tag {
                // Playing mixing streams with the tag are replaced too (the scheduler has the queue's).
                carryOut(mixed.end(where: { $0.tag == tag && !ids.contains($0.id) },
                                   Outcome(.replaced, reason: "replaced by \(item.id)")), now: now)
            }
            if item.audioSession.lane == .mixed {
                // Mixable: never queued, it starts now over whatever plays.
                var item = item
                item.sequence = scheduler.nextSequence
                do {
                    try spool.save(item)
                } catch {
                    logger.error("\(error.description)")
                    apply(scheduler.cancel(ids: ids, now: now).effects, now: now)
                    for id in ids where mixed[id] != nil { endMixed(id, .cancelled, now: now) }
                    return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the item: \(error.description)")))
                }
                ids.append(item.id)
                lifecycles[item.id] = ItemLifecycle()
                hub.emit(Event(.queued, time: now, id: item.id, path: item.clip.path, priority: item.priority))
                startMixed(item, alert: false, now: now)
                continue
            }
            lifecycles[item.id] = ItemLifecycle()  // before its effects: it may end at once (`--expire 0s`)
            var effects = scheduler.enqueue(item, replace: replace, now: now)
            // Spooled before it is acknowledged; if that fails, it was never accepted.
            if case .persist(let spooled)? = effects.first {
                effects.removeFirst()
                do {
                    try spool.save(spooled)
                } catch {
                    logger.error("\(error.description)")
                    // None of the request is accepted: its items spooled so far go too.
                    apply(effects + scheduler.cancel(ids: ids + [item.id], now: now).effects, now: now)
                    return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the item: \(error.description)")))
                }
            }
            ids.append(item.id)
            hub.emit(Event(.queued, time: now, id: item.id, path: item.clip.path, priority: item.priority))
            apply(effects, now: now)
        }
        // Its client left meanwhile (it gave up on a daemon frozen mid-request, saying "not played"): undone.
        if connection.peerHungUp {
            logger.warning("a play request whose client left before it was accepted is undone")
            for id in ids where mixed[id] != nil { endMixed(id, .cancelled, now: now) }
            return apply(scheduler.cancel(ids: ids, now: now).effects, now: now)
        }
        spool.commitRequest()  // right before the acknowledgement (the fsync comes after it)
        for (item, _) in items where lifecycles[item.id] != nil { downloads?.ensure(item) }
        // Main-lane items wait for `announce resume`: the client says so.
        let waitsForResume = scheduler.isPaused && items.contains { $0.0.audioSession.lane == .main }
        connection.send(WireProtocol.encode(Reply.ids(ids, pausedSince: waitsForResume ? runtime.pausedSince ?? now : nil)))
        if request.wait { subscribe(connection, to: ids, progress: request.progress) }
    }

    /// The first of `devices` that cannot be opened here, as its error. Devices that have played
    /// in this daemon (a later failure is waited for or reported like one mid-play) and those
    /// lost mid-play (waited for) are not probed again: the check costs a connection to a sound server.
    /// A `file:` device is checked every time: that costs a stat, and its directory may have gone.
    /// Within one request each device is checked once (`passed`), not once per item.
    func deviceFailure(_ devices: [String], environment: [String: String]?, passed: inout Set<String>) -> AnnounceError? {
        for device in devices where !passed.contains(device) && (DeviceName.fileArgument(device) != nil || !self.devices.isKnown(device)) {
            do { try probeDevice(device, environment) } catch { return error }
            passed.insert(device)
        }
        return nil
    }

    /// Streams these items' events to `connection`; an item that is already final
    /// (even one that ended while it was being queued, like `--expire 0s`) gets its
    /// finished event at once. Returns the ids nobody knows.
    @discardableResult
    func subscribe(_ connection: Connection, to ids: [String], progress: Bool) -> [String] {
        let pending = pendingIDs
        var unknown: [String] = []
        connection.wantsProgress = progress
        for id in ids {
            if pending.contains(id) {
                connection.waiting.insert(id)
                if progress { driver.watchProgress(id) }
            } else if let outcome = spool.outcome(of: id) {
                connection.send(WireProtocol.encode(outcome))
            } else {
                unknown.append(id)
            }
        }
        return unknown
    }

    func wait(for ids: [String], progress: Bool, connection: Connection) {
        let pending = pendingIDs
        let unknown = ids.filter { !pending.contains($0) && spool.outcome(of: $0) == nil }
        connection.send(WireProtocol.encode(Reply.ids(ids.filter { !unknown.contains($0) }, unknown: unknown)))
        subscribe(connection, to: ids.filter { !unknown.contains($0) }, progress: progress)
    }

    func newID() -> String {
        while true {
            let id = String(UInt64.random(in: 0..<(1 << 48)) | (1 << 48), radix: 16).dropFirst().description
            if spool.outcome(of: id) == nil { return id }
        }
    }
}
