import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The system queue's rules (DESIGN §8), asked of every request before its handler: who may
/// do what, whose items a caller may end, and the files the client handed over, copied into the
/// media directory before anything is spooled. The pure rules are AnnounceModel/System's.
extension QueueController {
    /// The rules `caller` is held to: the system queue's; on a user's own daemon, for the system
    /// queue connected as its listener (`SystemQueueLink`), the same rules with the defaults.
    func rules(for caller: Caller) -> SystemAccess? {
        configuration.access
            ?? SystemAccess(settings: SystemSettings(), group: gid_t.max, controlGroup: nil, daemonUID: getuid())
    }

    /// On a user's daemon, the system queue's connection ended (it stopped, or died): what it
    /// asked to play here ends, as the system queue plays it on from what was heard.
    func systemQueueLeft(_ callers: [Caller]) {
        guard !callers.isEmpty, configuration.access == nil else { return }
        let uids = Set(callers.map(\.uid))
        let ids = lanes.live.filter { $0.owner.map { uids.contains($0.uid) } ?? false }.map(\.id)
        guard !ids.isEmpty else { return }
        logger.info("the system queue left: its \(ids.count) item(s) here are cancelled")
        cancel(ids, now: clock())
    }

    /// On a user's daemon, the system queue's items restored after a restart: ended, never
    /// played again here (the system queue has played them on).
    func endForwarded(_ items: [QueueItem], now: Double) -> [QueueItem] {
        items.filter { item in
            guard item.owner != nil else { return true }
            let outcome = Outcome(.cancelled, reason: "the system queue's play does not outlive its connection")
            let event = Event(
                time: now, .finished(EventItem(item), outcome: outcome, reason: EventReason(outcome.reason!)))
            do throws(AnnounceError) { try spool.finish(item, event: event) } catch {
                logger.error("\(error.description)")
            }
            logger.info("\(item.id) \(item.clip.path): cancelled (\(outcome.reason!))")
            return false
        }
    }

    /// Why `caller` may not make `request`, as the error its client exits with; nil: it may.
    func systemRefusal(_ request: Request, from caller: Caller, access: SystemAccess) -> AnnounceError? {
        let allowed = access.allowedDevices(daemonDevice: configuration.device)
        // On a user's daemon the system queue plays, waits and cancels: it reads nothing of the user's.
        if configuration.access == nil, ![.play, .wait, .cancel].contains(request.operation) {
            return .notPermitted(
                "\(request.operation.rawValue) is not for the system queue on \(Accounts.name(of: getuid()))'s daemon")
        }
        switch request {
        case .play(let play):
            for (index, item) in play.items.enumerated() {
                if let refusal = item.systemRefusal(for: caller, allowedDevices: allowed) {
                    return .notPermitted("items[\(index)]: \(refusal)")
                }
            }
            return capRefusal(play, from: caller, access: access)
        case .alert(let alert, _):
            return alert.systemRefusal(for: caller, allowedDevices: allowed).map { .notPermitted("alert: \($0)") }
        case .pause, .resume, .stop, .clear:
            return caller.controlRefusal(request.operation, controlGroup: access.controlGroupName).map(
                AnnounceError.notPermitted)
        case .quiet:
            return caller.controlRefusal(.quiet, controlGroup: access.controlGroupName).map(AnnounceError.notPermitted)
        case .skip:
            guard !caller.mayControl, let playing = lanes.main.playing, !caller.owns(playing.owner) else { return nil }
            return .notPermitted(
                "skip: the playing item \(playing.id) is \(playing.owner?.name ?? "another user")'s, not \(caller.name)'s"
            )
        case .cancel(.ids(let ids)):
            for id in ids {
                if let item = lanes.item(id), !caller.owns(item.owner) {
                    return .notPermitted(
                        "cancel: \(id) is \(item.owner?.name ?? "another user")'s, not \(caller.name)'s")
                }
            }
            return nil
        case .wait, .status, .events, .cancel(.tag):
            return nil
        }
    }

    /// A request that would take `caller` past `[system] max-items-per-user` or
    /// `max-bytes-per-user` (69); root and the daemon itself are not held to them.
    private func capRefusal(_ play: PlayRequest, from caller: Caller, access: SystemAccess) -> AnnounceError? {
        guard !caller.isTrusted else { return nil }
        let own = lanes.live.filter { $0.owner?.uid == caller.uid }
        let limit = access.settings.maxItemsPerUser
        if own.count + play.items.count > limit {
            return .unavailable(
                "the system queue holds at most \(limit) items per user ([system] max-items-per-user); \(caller.name) has \(own.count) waiting"
            )
        }
        return nil
    }

    /// The handed files of `play` copied into the media directory, each clip then naming its copy
    /// (`clip.media`, the chimes' paths there); false when one cannot be taken: the client is
    /// answered (66, 65, 69) and nothing of the request stays. `stored` gets every copy made,
    /// for the caller to keep once the request is accepted or delete.
    func takeHanded(
        _ play: inout PlayRequest, descriptors: [Int32], caller: Caller, access: SystemAccess,
        stored: inout [MediaFile], connection: Connection
    ) -> Bool {
        let media = spool.media
        var bytes: Int64 = 0
        let budget = caller.isTrusted ? Int64.max : access.settings.maxBytesPerUser - ownedBytes(of: caller.uid)
        func copy(_ index: Int, label: String) throws(AnnounceError) -> MediaFile {
            guard index < descriptors.count else {
                throw .usage("handed: descriptor \(index) did not come with the request (\(descriptors.count) did)")
            }
            let file = try media.store(copyOf: descriptors[index], label: label, limit: MediaDirectory.limit)
            stored.append(file)
            var info = stat()
            if stat(file.path, &info) == 0 { bytes += Int64(info.st_size) }
            if bytes > budget {
                throw .unavailable(
                    "the system queue holds at most \(access.settings.maxBytesPerUser >> 20) MiB of files per user ([system] max-bytes-per-user); \(caller.name)'s would pass it"
                )
            }
            return file
        }
        do throws(AnnounceError) {
            for index in play.items.indices {
                var clip = play.items[index].clip
                // A caller's sound-server variables would open its own server as the daemon.
                clip.environment = nil
                if let handed = clip.handed {
                    if let audio = handed.audio {
                        clip.media = try copy(audio, label: clip.path).name
                        clip.pathBytes = nil
                    }
                    if let chime = handed.chime {
                        clip.chime = try copy(chime, label: "--chime \(clip.chime ?? "")").path
                    }
                    if let after = handed.chimeAfter {
                        clip.chimeAfter = try copy(after, label: "--chime-after \(clip.chimeAfter ?? "")").path
                    }
                    clip.handed = nil
                }
                play.items[index].clip = clip
            }
            return true
        } catch {
            logger.info("refused a play of \(caller.name)'s: \(error.description)")
            connection.sendAndClose(WireProtocol.encode(Reply.failure(error.exitCode, error.description)))
            return false
        }
    }

    /// An alert's handed sound, copied as `takeHanded` does; nil when refused (answered).
    func takeHanded(
        _ alert: inout AlertRequest, descriptors: [Int32], stored: inout [MediaFile], connection: Connection
    ) -> String? {
        alert.environment = nil
        guard let index = alert.handed else { return nil }
        do throws(AnnounceError) {
            guard index < descriptors.count else {
                throw .usage("handed: descriptor \(index) did not come with the request")
            }
            let file = try spool.media.store(copyOf: descriptors[index], label: alert.path, limit: MediaDirectory.limit)
            stored.append(file)
            alert.handed = nil
            alert.pathBytes = nil
            return file.name
        } catch {
            connection.sendAndClose(WireProtocol.encode(Reply.failure(error.exitCode, error.description)))
            return nil
        }
    }

    /// Bytes the media files of `uid`'s live items hold.
    private func ownedBytes(of uid: UInt32) -> Int64 {
        lanes.live.filter { $0.owner?.uid == uid }.reduce(0) { total, item in
            total
                + spool.media.names(ownedBy: item.clip).reduce(0) { sum, name in
                    var info = stat()
                    return sum + (stat(spool.media.filePath(name), &info) == 0 ? Int64(info.st_size) : 0)
                }
        }
    }
}

extension Connection {
    /// `event` as this client may see it: another user's item without its path, text or URL.
    func view(of event: Event) -> Event.Wire {
        guard let caller, !caller.isTrusted, let owner = event.item?.owner, owner.uid != caller.uid else {
            return Event.Wire(event)
        }
        return event.privateView()
    }
}
