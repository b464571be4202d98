import AnnounceClient
import AnnounceModel
import AnnounceSystem
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The play ids a host has taken, one file each in `RUNTIME/zones/seen/`, written (and synced)
/// before the play is queued: QoS 1 may deliver a message again, even after a restart, and an id
/// seen before is never played again. A record keeps the local item ids and whether the result
/// went out, so that a daemon killed mid-item still answers once it is back. Records are
/// forgotten when they expire (the play's own expiry plus `ZoneLimits.seenRetention`; a refused
/// play's after `ZoneLimits.refusedRetention`), or beyond `ZoneLimits.maxSeenRecords` (`SeenRecords`).
final class SeenPlays: @unchecked Sendable {
    struct Record: Codable {
        var expires: Double
        var ids: [ItemID]?
        var answered: Bool?
        /// Its sender cancelled it before it came: it is never played.
        var cancelled: Bool?
    }

    let directory: String
    /// When expired records were last forgotten (at start, then at most hourly as plays come),
    /// and how many records there are since (about: a record written twice counts twice).
    private let sweep = Mutex((last: 0.0, records: 0))

    init(directory zones: String) throws(AnnounceError) {
        directory = zones + "/seen"
        for path in [zones, directory] where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .unavailable("cannot make \(path): \(systemErrorMessage(errno))")
        }
        forgetExpired(now: SystemClock.wall())
    }

    private func path(_ id: PlayID) -> String { directory + "/" + id.rawValue }

    /// True when `id` is new (and now remembered); false when it was seen before. A record that
    /// cannot be written counts as new: better a play than none, and the log says why.
    /// `durable` false: not synced (a refusal's: lost in a crash, a copy is only refused again).
    func remember(_ id: PlayID, expires: Double, cancelled: Bool = false, durable: Bool = true) -> Bool {
        let now = SystemClock.wall()
        if sweep.withLock({ now - $0.last > 3600 || $0.records >= ZoneLimits.maxSeenRecords }) {
            forgetExpired(now: now)
        }
        let fd = open(path(id), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { return errno != EEXIST }
        let bytes = JSONCoding.encode(Record(expires: expires, cancelled: cancelled ? true : nil), orElse: "{}")
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if durable { fsync(fd) }
        close(fd)
        if durable { syncDirectory() }
        sweep.withLock { $0.records += 1 }
        return true
    }

    /// The local items of play `id`, and whether its result was published.
    func record(_ id: PlayID, ids: [ItemID], answered: Bool = false) {
        guard var record = load(id) else { return }
        record.ids = ids
        record.answered = answered
        let temporary = directory + "/." + id.rawValue + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = JSONCoding.encode(record, orElse: "{}")
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        rename(temporary, path(id))
        syncDirectory()
    }

    /// The local items of play `id`, when it was queued here.
    func ids(of id: PlayID) -> [ItemID]? { load(id)?.ids }

    /// Play `id` was cancelled before it came.
    func wasCancelled(_ id: PlayID) -> Bool { load(id)?.cancelled == true }

    private func load(_ id: PlayID) -> Record? {
        readWholeFile(path(id), limit: 1 << 20).flatMap { try? JSONCoding.decode(Record.self, from: $0) }
    }

    /// The plays queued but not answered when the daemon last stopped.
    var unanswered: [(id: PlayID, ids: [ItemID])] {
        names().compactMap { name in
            guard let record = load(name), let ids = record.ids, record.answered != true else { return nil }
            return (name, ids)
        }
    }

    /// Waits again for the plays a stopped daemon left unanswered.
    func resumeWaits(_ bridge: ZoneBridge) {
        for (request, ids) in unanswered {
            do throws(AnnounceError) {
                try bridge.waiter.wait(for: request, ids: ids, answered: true)
                bridge.logger.info("zones: waiting again for play \(request) (\(ids.count) item(s))")
            } catch {
                bridge.logger.warning("zones: cannot wait again for play \(request): \(error.description)")
            }
        }
    }

    private func names() -> [PlayID] { directoryEntries(directory).map(PlayID.init).filter(\.isWellFormed) }

    /// Forgets the records `SeenRecords` says (expired, or beyond the most kept).
    func forgetExpired(now: Double) {
        let entries = names().map { name in
            let record = load(name)
            return SeenRecords.Entry(
                name: name, expires: record?.expires ?? 0, pending: record?.ids != nil && record?.answered != true)
        }
        let forgotten = SeenRecords.toForget(entries, now: now)
        for name in forgotten { unlink(path(name)) }
        sweep.withLock { $0 = (now, entries.count - forgotten.count) }
    }

    private func syncDirectory() {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}
