import AnnounceModel
import AnnounceSystem
import CPosix
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A user's permanent daemon offered to the system queue as its listener (DESIGN §8, Where the
/// sound goes): it connects to `SYSTEM/listener` whenever that socket is there, and the system
/// daemon on the other end is then one more client of this daemon, held to the system queue's
/// rules (`QueueController.rules(for:)`: files only as descriptors, no path, device or control).
/// The system daemon decides whether this user is the listener; nothing is asked here. Woken by
/// inotify on the directory (a socket made or moved in), never by a timer.
final class SystemQueueLink {
    private let socketPath: String
    private let directory: String
    private let logger: Logger
    /// inotify, on the system directory (or its parent until the directory exists).
    let watch: Int32
    private var watching: Int32 = -1
    private var watchingDirectory = false
    /// The descriptor of the connection while it is in the hub.
    private var linked: Int32?

    init?(systemDirectory: String, logger: Logger) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        watch = fd
        directory = systemDirectory
        socketPath = RuntimeDirectory.systemListenerPath(systemDirectory)
        self.logger = logger
        rewatch()
    }

    deinit { close(watch) }

    /// Watches the directory when it exists, else its parent for the directory to appear.
    private func rewatch() {
        let exists = access(directory, F_OK) == 0
        guard watching < 0 || exists != watchingDirectory else { return }
        if watching >= 0 { inotify_rm_watch(watch, watching) }
        let parent = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
        watching = inotify_add_watch(
            watch, exists ? directory : (parent.isEmpty ? "/" : parent),
            UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF))
        watchingDirectory = exists
    }

    /// The directory changed: drains the news and connects if not connected.
    func changed(hub: EventHub) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(watch, &buffer, buffer.count) > 0 {}
        rewatch()
        connect(hub: hub)
    }

    /// When the connection ended (the hub reaped it): connects again at once, at most once a
    /// second; else the directory's next change does.
    func reconnectIfDropped(hub: EventHub) {
        guard let linked, hub.connections[linked] == nil else { return }
        self.linked = nil
        let now = SystemClock.monotonic()
        guard now - lastAttempt >= 1 else { return }
        connect(hub: hub)
    }

    private var lastAttempt = -Double.infinity

    /// Connects when not connected.
    func connect(hub: EventHub) {
        if let linked, hub.connections[linked] != nil { return }
        linked = nil
        lastAttempt = SystemClock.monotonic()
        guard RuntimeDirectory.socketExists(socketPath) else { return }
        let fd = announce_unix_connect(socketPath, 1000)
        guard fd >= 0 else { return }
        // The system daemon's own: the peer owns the directory the socket is in.
        var uid = uid_t.max
        var gid = gid_t.max
        var info = stat()
        guard announce_peer_ids(fd, &uid, &gid) == 0, stat(directory, &info) == 0, info.st_uid == uid,
            info.st_mode & 0o022 == 0,
            uid != getuid()
        else {
            close(fd)
            return logger.warning(
                "\(socketPath) is not the system queue's (not its directory's owner's); not connected")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        hub.add(
            Connection(
                fd: fd,
                caller: Caller(
                    uid: uid, name: "the system queue", isTrusted: false, mayEnqueue: true, mayControl: false)))
        linked = fd
        logger.info(
            "connected to the system queue at \(socketPath): its items play here while this user is its listener")
    }
}
