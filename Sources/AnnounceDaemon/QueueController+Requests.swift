import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The requests: one handler each, taking the request and the connection it came on.
extension QueueController {
    /// One request line: decoded, checked, and handed to its handler. `descriptors`: the files
    /// that came with it (the system queue's handed files); the caller closes them afterwards.
    func handle(_ line: ArraySlice<UInt8>, descriptors: [Int32] = [], from connection: Connection) {
        // The system queue's outsiders are refused before anything of theirs is read.
        if let caller = connection.caller, !caller.mayEnqueue {
            logger.info("refused \(caller.name) (uid \(caller.uid)): not in group '\(SystemSettings.group)'")
            return refuse(connection, .notPermitted(caller.outsider))
        }
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
        if let caller = connection.caller, let access = rules(for: caller),
            let refusal = systemRefusal(request, from: caller, access: access)
        {
            logger.info("refused \(caller.name)'s \(request.operation.rawValue): \(refusal.description)")
            return refuse(connection, refusal)
        }
        let now = clock()
        switch request {
        case .play(var play):
            guard let caller = connection.caller, let access = rules(for: caller) else {
                handlePlay(play, from: connection, now: now)
                return
            }
            var stored: [MediaFile] = []
            let accepted =
                takeHanded(
                    &play, descriptors: descriptors, caller: caller, access: access, stored: &stored,
                    connection: connection)
                && handlePlay(play, from: connection, now: now)
            for file in stored { accepted ? file.release() : file.discard() }
        case .alert(var alert, let wait):
            guard connection.caller != nil else {
                handleAlert(alert, wait: wait, from: connection, now: now)
                return
            }
            var stored: [MediaFile] = []
            let media = takeHanded(&alert, descriptors: descriptors, stored: &stored, connection: connection)
            let accepted =
                alert.handed == nil && (media != nil || stored.isEmpty) && !connection.closing
                && handleAlert(
                    alert, media: media, owner: connection.caller?.owner, wait: wait, from: connection, now: now)
            // an accepted one's goes with its outcome
            for file in stored { accepted ? file.release() : file.discard() }
        case .wait(let ids, let progress): wait(for: ids, progress: progress, connection: connection)
        case .status: answerStatus(connection)
        case .skip, .pause, .resume, .stop:
            controlQueue(request, now: now)
            connection.send(WireProtocol.encode(Reply.done))
        case .clear: control(connection, lanes.main.clear(now: now), now: now)
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
        case .skip: carryOut(lanes.main.skip(now: now), now: now)
        case .pause:
            setPausedMarker(true)
            carryOut(lanes.main.pause(now: now), now: now)
            hub.emit(Event(time: now, .paused))
        case .resume:
            setPausedMarker(false)
            carryOut(resumeAwaiting(now: now) + lanes.main.resume(now: now), now: now)
            hub.emit(Event(time: now, .resumed))
        case .stop:
            for id in lanes.mixed.ids.sorted() { endMixed(id, .stopped, now: now) }
            carryOut(lanes.main.stop(now: now), now: now)
        default: break
        }
    }

    /// An MPRIS control a client sent over the session bus: what `announce` itself would ask.
    func handle(_ control: PlayerControl) {
        let request = NowPlaying.request(for: control, paused: lanes.main.isPaused)
        logger.info("MPRIS \(control.rawValue): \(request.operation.rawValue)")
        controlQueue(request, now: clock())
    }

    /// `announce cancel`: by tag, or by ids (the unknown ones are named in the reply).
    private func handleCancel(_ target: CancelTarget, from connection: Connection, now: Double) {
        switch target {
        case .tag(let tag):
            // A tag is its owner's: on the system queue each caller cancels their own.
            let owner = connection.caller?.uid
            carryOut(lanes.mixed.end(where: { $0.tag == tag && $0.owner?.uid == owner }, .cancelled), now: now)
            control(connection, lanes.main.cancel(tag: tag, owner: owner, now: now), now: now)
        case .ids(let ids):
            connection.send(WireProtocol.encode(Reply.cancelled(unknown: cancel(ids, now: now))))
        }
    }

    /// Ends `ids` as cancelled on whichever lane holds them, the mixed lane's streams first;
    /// returns the ids neither knows.
    @discardableResult
    func cancel(_ ids: [ItemID], now: Double) -> [ItemID] {
        let (mixed, rest) = lanes.split(ids)
        for id in mixed { endMixed(id, .cancelled, now: now) }
        let (effects, unknown) = lanes.main.cancel(ids: rest, now: now)
        carryOut(effects, now: now)
        return unknown
    }

    /// `announce quiet on|off|until`: takes effect for the next item that starts; the one
    /// playing now goes on. Saved in the runtime directory so a restart keeps it.
    private func handleQuiet(_ position: QuietRequest, from connection: Connection, now: Double) {
        let setting: QuietSetting
        do { setting = try position.setting(at: now) } catch { return reject(connection, error.description) }
        // Kept across restarts or not taken at all: a switch that a restart would forget is refused.
        do { try runtime.saveQuietSetting(setting) } catch {
            logger.error("\(error.description)")
            return connection.send(
                WireProtocol.encode(Reply.failure(error.exitCode, "quiet mode not changed: \(error.description)")))
        }
        quiet.setting = setting
        let state = quiet.state(at: now)
        logger.info("quiet \(setting.kind.rawValue): quiet mode is \(state.quiet ? "on" : "off") (\(state.reason))")
        hub.emit(
            Event(
                time: now,
                .quiet(reason: .other(state.reason), quiet: state.quiet, state: setting.kind, until: state.until)
            ))
        connection.send(WireProtocol.encode(Reply.done))
    }

    func reject(_ connection: Connection, _ message: String) {
        connection.sendAndClose(WireProtocol.encode(Reply.refusal(message)))
    }

    /// A failure reply with the error's code, and the connection closed.
    func refuse(_ connection: Connection, _ error: AnnounceError) {
        connection.sendAndClose(WireProtocol.encode(Reply.failure(error.exitCode, error.description)))
    }

    private func control(_ connection: Connection, _ effects: [SchedulerEffect], now: Double) {
        carryOut(effects, now: now)
        connection.send(WireProtocol.encode(Reply.done))
    }

    /// Streams these items' events to `connection`; an item that is already final
    /// (even one that ended while it was being queued, like `--expire 0s`) gets its
    /// finished event at once. Returns the ids nobody knows.
    @discardableResult
    func subscribe(_ connection: Connection, to ids: [ItemID], progress: Bool) -> [ItemID] {
        let pending = pendingIDs
        var unknown: [ItemID] = []
        connection.wantsProgress = progress
        for id in ids {
            if pending.contains(id) {
                connection.waiting.insert(id)
                if progress { driver.watchProgress(id) }
            } else if let outcome = spool.outcome(of: id) {
                connection.send(WireProtocol.encode(connection.view(of: outcome)))
            } else {
                unknown.append(id)
            }
        }
        return unknown
    }

    func wait(for ids: [ItemID], progress: Bool, connection: Connection) {
        let pending = pendingIDs
        let unknown = ids.filter { !pending.contains($0) && spool.outcome(of: $0) == nil }
        connection.send(WireProtocol.encode(Reply.ids(ids.filter { !unknown.contains($0) }, unknown: unknown)))
        subscribe(connection, to: ids.filter { !unknown.contains($0) }, progress: progress)
    }
}
