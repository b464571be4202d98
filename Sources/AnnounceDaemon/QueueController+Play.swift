import AnnounceModel
import AnnounceOutput
import AnnounceSystem

/// `play`: its items checked, spooled all or nothing, queued or started, and acknowledged.
extension QueueController {
    /// `play`, its values already checked (`Request.problem`). True when its items were queued
    /// now (not when refused, nor when they were restored from a request sent before).
    @discardableResult
    func handlePlay(_ request: PlayRequest, from connection: Connection, now: Double) -> Bool {
        // Sent again: the daemon before this one spooled it, and died before it answered.
        if let key = request.key, let ids = restored.requests[key] {
            answerResent(ids, request, connection, now: now)
            return false
        }
        guard let items = newItems(request, connection, now: now) else { return false }
        // All or nothing across a crash too: uncommitted until every item is spooled.
        do { try spool.beginRequest(items.map(\.item.id), key: request.key) } catch {
            logger.error("\(error.description)")
            connection.send(
                WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the request: \(error.description)")))
            return false
        }
        defer { spool.endRequest() }
        var ids: [ItemID] = []
        for (item, replaces) in items {
            do { try admit(item, replacing: replaces, after: ids, now: now) } catch {
                logger.error("\(error.description)")
                // None of the request is accepted: its items spooled so far go too.
                cancel(ids + [item.id], now: now)
                connection.send(
                    WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the item: \(error.description)")))
                return false
            }
            ids.append(item.id)
        }
        // Its client left meanwhile (it gave up on a daemon frozen mid-request, saying "not played"): undone.
        if connection.peerHungUp {
            logger.warning("a play request whose client left before it was accepted is undone")
            cancel(ids, now: now)
            return false
        }
        spool.commitRequest()  // right before the acknowledgement (the fsync comes after it)
        for (item, _) in items where lifecycles[item.id] != nil { downloads?.ensure(item) }
        // Main-lane items wait for `announce resume`: the client says so.
        let waitsForResume = lanes.main.isPaused && items.contains { $0.item.audioSession.lane == .main }
        connection.send(
            WireProtocol.encode(Reply.ids(ids, pausedSince: waitsForResume ? runtime.pausedSince ?? now : nil)))
        if request.wait { subscribe(connection, to: ids, progress: request.progress) }
        return true
    }

    /// A request sent again after a restart: answered with the items the spool kept for it.
    private func answerResent(_ ids: [ItemID], _ request: PlayRequest, _ connection: Connection, now: Double) {
        logger.info("a play request sent again after a restart: its \(ids.count) item(s) were restored")
        let pending = pendingIDs
        let waitsForResume = lanes.main.isPaused && ids.contains { !lanes.isMixed($0) && pending.contains($0) }
        connection.send(
            WireProtocol.encode(Reply.ids(ids, pausedSince: waitsForResume ? runtime.pausedSince ?? now : nil)))
        if request.wait { subscribe(connection, to: ids, progress: request.progress) }
    }

    /// The request's items, each with whether it replaces its tag's older ones; nil when a device
    /// cannot play (the client is answered: nothing queued, nothing preempted).
    private func newItems(_ request: PlayRequest, _ connection: Connection, now: Double) -> [(
        item: QueueItem, replaces: Bool
    )]? {
        var items: [(item: QueueItem, replaces: Bool)] = []
        var passed: Set<DeviceName> = []  // devices checked for this request: each once, not per item
        for (index, itemRequest) in request.items.enumerated() {
            // A missing device is the daemon's own: it must not come twice either.
            let devices = itemRequest.clip.devices(default: configuration.device)
            if Set(devices).count != devices.count {
                reject(connection, "items[\(index)]: device \(configuration.device) (the daemon's) is given twice")
                return nil
            }
            if let failure = deviceFailure(devices, environment: itemRequest.clip.environment, passed: &passed) {
                connection.sendAndClose(WireProtocol.encode(Reply.failure(failure.exitCode, failure.description)))
                return nil
            }
            var item = QueueItem(request: itemRequest, id: newID(), now: now)
            item.requestKey = request.key
            item.owner = connection.caller?.owner
            if let owner = item.owner { hub.owners[item.id] = owner }
            // A URL's body is downloaded into the media directory under a name the daemon gives.
            if item.clip.url != nil { item.clip.media = MediaDirectory.newName() }
            // `play --tag T --replace a b` replaces older T items, not its own first file.
            let replaces = (itemRequest.replace ?? false) && !items.contains { $0.item.tag == item.tag && $0.replaces }
            items.append((item, replaces))
        }
        return items
    }

    /// One item of the request into its lane: spooled before it is accepted (a failure throws,
    /// nothing of it left), then queued on the main lane or started on the mixed one.
    private func admit(_ item: QueueItem, replacing replaces: Bool, after ids: [ItemID], now: Double)
        throws(AnnounceError)
    {
        if replaces, let tag = item.tag {
            // Playing mixing streams with the tag are replaced too (the scheduler has the queue's).
            carryOut(
                lanes.mixed.end(
                    where: { $0.tag == tag && $0.owner?.uid == item.owner?.uid && !ids.contains($0.id) },
                    Outcome(.replaced, reason: "replaced by \(item.id)")), now: now)
        }
        if item.audioSession.lane == .mixed {
            // Mixable: never queued, it starts now over whatever plays.
            var item = item
            item.sequence = lanes.main.nextSequence
            try spool.save(item)
            lifecycles[item.id] = ItemLifecycle()
            hub.emit(
                Event(time: now, .queued(EventItem(item))))
            return startMixed(item, alert: false, now: now)
        }
        lifecycles[item.id] = ItemLifecycle()  // before its effects: it may end at once (`--expire 0s`)
        var effects = lanes.main.enqueue(item, replace: replaces, now: now)
        // A preempted item stops while this one is spooled: the engine takes a moment to let go.
        for case .stopPlayback(let id, _) in effects { stopPlay(id) }
        effects.removeAll { if case .stopPlayback = $0 { true } else { false } }
        if case .persist(let spooled)? = effects.first {
            effects.removeFirst()
            do { try spool.save(spooled) } catch {
                carryOut(effects, now: now)
                throw error
            }
        }
        hub.emit(
            Event(time: now, .queued(EventItem(item))))
        carryOut(effects, now: now)
    }

    /// The first of `devices` that cannot be opened here, as its error. Devices that have played
    /// in this daemon (a later failure is waited for or reported like one mid-play) and those
    /// lost mid-play (waited for) are not probed again: the check costs a connection to a sound server.
    /// A `file:` device is checked every time: that costs a stat, and its directory may have gone.
    /// Within one request each device is checked once (`passed`), not once per item.
    func deviceFailure(_ devices: [DeviceName], environment: [String: String]?, passed: inout Set<DeviceName>)
        -> AnnounceError?
    {
        for device in devices
        where !passed.contains(device) && (device.fileArgument != nil || !self.devices.isKnown(device)) {
            do { try probeDevice(device, environment) } catch { return error }
            passed.insert(device)
        }
        return nil
    }

    /// A new item's id: random, and not one whose outcome the spool still keeps.
    func newID() -> ItemID {
        while true {
            let id = ItemID.random()
            if spool.outcome(of: id) == nil { return id }
        }
    }
}
