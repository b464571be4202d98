import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Accepted items on disk, so a killed daemon loses nothing: one JSON file per
/// item, written to a temporary name, fsynced and renamed into place before the
/// item is acknowledged. A request is all or nothing, across a crash too
/// (`beginRequest`, `commitRequest`, `endRequest`): several items are listed in a
/// record written before the first and removed once all are spooled (on load, the
/// items of a record still there go), and the reply goes out right after that
/// commit point, before the directory's fsync, so a kill can hardly fall between.
/// Final outcomes are kept for a while in `outcomes/`, so a client that reconnects
/// after a restart still learns how its item ended. Media files (`announce play -`) belong to
/// their items: they go with the item's outcome, and at load with no item naming them.
final class Spool {
    let directory: String
    let outcomesDirectory: String
    let media: MediaDirectory
    private let directoryFD: Int32
    private let outcomesFD: Int32
    /// The ids of a request being spooled, not yet acknowledged.
    private var uncommittedPath: String { directory + "/request.uncommitted" }
    /// The same record once committed, until the reply is out: left by a daemon that died in
    /// between, it tells the next one the whole request, in order, for its client's resend.
    private var committedPath: String { directory + "/request.committed" }
    private var requestOpen = false
    private var recordWritten = false
    /// Outcomes older than this are pruned at start.
    static let outcomeLifetime: Double = 3600

    init(runtime: RuntimeDirectory) throws(AnnounceError) {
        directory = runtime.spoolPath
        outcomesDirectory = runtime.outcomesPath
        media = MediaDirectory(runtime: runtime)
        for path in [directory, outcomesDirectory, media.path] where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .unavailable("cannot create \(path): \(systemErrorMessage(errno))")
        }
        directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        outcomesFD = open(outcomesDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0, outcomesFD >= 0 else {
            throw .unavailable("cannot open the spool in \(runtime.path): \(systemErrorMessage(errno))")
        }
    }

    deinit {
        close(directoryFD)
        close(outcomesFD)
    }

    /// Durably stores `item` (new, or with a new resume point).
    func save(_ item: QueueItem) throws(AnnounceError) {
        try writeFileAtomically(
            JSONCoding.encode(item, orElse: "{}"), to: directory + "/" + Self.fileName(item.id),
            directoryFD: directoryFD, syncDirectory: !requestOpen)
        #if DEBUG
            CrashInjection.afterSpoolWrite()
        #endif
    }

    /// Opens a request of `ids` (`key`: its client's name for it): with several, until
    /// `commitRequest` a crash discards every one of them that was spooled (one item needs no
    /// record: its rename is atomic, and its entry keeps the key).
    func beginRequest(_ ids: [ItemID], key: String?) throws(AnnounceError) {
        if ids.count > 1 {
            let lines = (key.map { ["key=" + $0] } ?? []) + ids.map(\.rawValue)
            try writeFileAtomically(
                Array(lines.joined(separator: "\n").utf8), to: uncommittedPath, directoryFD: directoryFD)
            recordWritten = true
        }
        requestOpen = true
    }

    /// The commit point: the request's items are accepted; acknowledge them next, then `endRequest`.
    func commitRequest() {
        if recordWritten { rename(uncommittedPath, committedPath) }
        recordWritten = false
        #if DEBUG
            CrashInjection.atCommit()
        #endif
    }

    /// Commits the request if it still is open (a failed one: its items were cancelled, nothing
    /// is left to discard) and makes what it spooled durable.
    func endRequest() {
        guard requestOpen else { return }
        commitRequest()
        requestOpen = false
        fsync(directoryFD)
        unlink(committedPath)  // answered
    }

    /// Records the item's final event, then forgets the item and deletes its media. The entry
    /// goes even when the outcome cannot be written (a full disk): a restart must not play it
    /// again. The media goes last: a crash before leaves it to the next `load`.
    func finish(_ item: QueueItem, event: Event) throws(AnnounceError) {
        var failure: AnnounceError?
        do {
            try writeFileAtomically(
                JSONCoding.encode(event, orElse: "{}"), to: outcomesDirectory + "/" + Self.fileName(item.id),
                directoryFD: outcomesFD)
        } catch {
            failure = error
        }
        unlink(directory + "/" + Self.fileName(item.id))
        fsync(directoryFD)
        for name in media.names(ownedBy: item.clip) { media.remove(name) }
        if let failure { throw failure }
    }

    /// The final event of an item that ended within the last hour, if any.
    func outcome(of id: ItemID) -> Event? {
        guard id.isWellFormed, let bytes = readWholeFile(outcomesDirectory + "/" + Self.fileName(id)) else {
            return nil
        }
        return try? JSONCoding.decode(Event.self, from: bytes)
    }

    /// Every spooled item, and a line for each file that could not be read
    /// (moved aside to `NAME.corrupt` so it is reported once). Items that already
    /// have an outcome (the daemon died between the two writes) are dropped, and so
    /// are the items of a request that was never committed (it was never acknowledged).
    /// `committed`: the request a daemon committed and died before answering, if any (its key
    /// and every id, in order); read once.
    func load() -> (items: [QueueItem], problems: [String], committed: (key: String, ids: [ItemID])?) {
        var items: [QueueItem] = []
        var problems: [String] = []
        var committed: (key: String, ids: [ItemID])?
        if let record = readWholeFile(committedPath) {
            unlink(committedPath)
            let lines = Self.lines(record)
            if let key = lines.first(where: { $0.hasPrefix("key=") })?.dropFirst(4) {
                committed = (String(key), lines.map { ItemID($0) }.filter(\.isWellFormed))
            }
        }
        if let record = readWholeFile(uncommittedPath) {
            let ids = Self.lines(record).map { ItemID($0) }.filter(\.isWellFormed)
            let dropped = ids.filter { unlink(directory + "/" + Self.fileName($0)) == 0 }
            unlink(uncommittedPath)
            fsync(directoryFD)
            if !dropped.isEmpty {
                problems.append(
                    "discarded \(dropped.count) of \(ids.count) item(s) of a request interrupted before it was accepted"
                )
            }
        }
        var names: [String] = []
        for name in directoryEntries(directory) {
            if name.hasPrefix(".") && name.hasSuffix(".tmp") {
                unlink(directory + "/" + name)  // a write that never got renamed was never acknowledged
            } else if name.hasSuffix(".json") {
                names.append(name)
            }
        }
        let ended = Set(directoryEntries(outcomesDirectory))
        // Decoding is most of a restart's time (10,000 items: ~0.2 s on one core).
        let spoolDirectory = directory
        let decoded = concurrentMap(names, threads: names.count < 512 ? 1 : min(usableProcessors, 8)) { name in
            readWholeFile(spoolDirectory + "/" + name).flatMap { try? JSONCoding.decode(QueueItem.self, from: $0) }
        }
        for (name, item) in zip(names, decoded) {
            let path = directory + "/" + name
            guard let item, Self.fileName(item.id) == name else {
                problems.append("\(path): unreadable spool entry, moved to \(name).corrupt")
                rename(path, path + ".corrupt")
                continue
            }
            if ended.contains(name) {
                unlink(path)
                continue
            }
            items.append(item)
        }
        // A client killed before its item was acknowledged, or an item whose media outlived it.
        let removed = media.sweep(
            keeping: Set(items.flatMap { media.names(ownedBy: $0.clip) }.flatMap(MediaDirectory.files)))
        if removed > 0 { problems.append("removed \(removed) media file(s) of no queued item from \(media.path)") }
        return (items, problems, committed)
    }

    private static func lines(_ record: [UInt8]) -> [String] {
        record.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Removes outcomes older than an hour.
    func pruneOutcomes(now: Double) {
        for name in directoryEntries(outcomesDirectory) {
            var info = stat()
            let path = outcomesDirectory + "/" + name
            if stat(path, &info) == 0, Double(info.st_mtim.tv_sec) < now - Self.outcomeLifetime { unlink(path) }
        }
    }

    private static func fileName(_ id: ItemID) -> String { id.rawValue + ".json" }
}

#if DEBUG
    /// Tests only: `ANNOUNCE_TEST_KILL_AFTER_SPOOL_WRITES=N` (`…_STOP_…`) makes a debug daemon
    /// SIGKILL (SIGSTOP) itself right after its Nth item write, once: what a crash, or a daemon
    /// frozen between two writes, leaves behind.
    enum CrashInjection {
        nonisolated(unsafe) private static var plan: (writesLeft: Int, signal: Int32)? = {
            for (name, signal) in [
                ("ANNOUNCE_TEST_KILL_AFTER_SPOOL_WRITES", SIGKILL), ("ANNOUNCE_TEST_STOP_AFTER_SPOOL_WRITES", SIGSTOP)
            ] {
                if let count = getenv(name).flatMap({ Int(String(cString: $0)) }) { return (count, signal) }
            }
            return nil
        }()

        /// ANNOUNCE_TEST_KILL_AT_COMMIT: a kill between the commit point and the reply.
        private static let killAtCommit = getenv("ANNOUNCE_TEST_KILL_AT_COMMIT") != nil

        static func atCommit() {
            if killAtCommit { raise(SIGKILL) }
        }

        static func afterSpoolWrite() {
            guard let (left, signal) = plan else { return }
            plan = left > 1 ? (left - 1, signal) : nil
            if left <= 1 { raise(signal) }
        }
    }
#endif
