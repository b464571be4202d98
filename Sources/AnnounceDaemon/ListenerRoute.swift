import AnnounceModel
import AnnounceSources
import AnnounceSystem
import CPosix
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The system queue's way to a desktop (DESIGN §8, Where the sound goes). A user's own daemon
/// connects to `RUNTIME/listener` (0666: anyone may connect; only the listener is used); when an
/// item is to play and the listener's daemon is connected, the item plays there instead of on
/// the device: a `play` of its audio, handed as a descriptor under a label that names only its
/// id, whose events come back as the engine's reports. Decides nothing about items: the
/// controller routes its plays and stops here first (`play`, `stop`).
final class ListenerRoute {
    /// The socket users' daemons connect to.
    let socket: SocketListener
    /// Connected daemons, one per user (a newer one replaces the older).
    private(set) var links: [Int32: ListenerLink] = [:]
    /// `[system] listener`, else the user active on seat0.
    private let configuredListener: String?
    private let post: (EngineReport) -> Void
    private let logger: Logger
    /// The daemon's own device: where a play goes on when its listener leaves.
    private let device: DeviceName

    /// Where logind says who is active on seat0 (a test's file).
    private let seat: String

    init(
        path: String, listener: String?, device: DeviceName, seat: String = ListenerRoute.seatPath, logger: Logger,
        post: @escaping (EngineReport) -> Void
    ) throws(AnnounceError) {
        socket = try SocketListener(path: path, mode: 0o666)
        configuredListener = listener
        self.seat = seat
        self.device = device
        self.logger = logger
        self.post = post
    }

    /// Most users' daemons connected at once.
    static let maxLinks = 64
    /// Where logind says who is active on seat0.
    static let seatPath = "/run/systemd/seats/seat0"

    /// Takes the waiting connections.
    func accept() {
        while true {
            let fd = announce_unix_accept(socket.fd)
            if fd == -EINTR { continue }
            guard fd >= 0 else { return }
            var uid = uid_t.max
            var gid = gid_t.max
            guard announce_peer_ids(fd, &uid, &gid) == 0 else {
                close(fd)
                continue
            }
            for (other, link) in links where link.uid == uid {
                link.close(reason: "a newer connection of \(link.name)'s replaced it")
                links[other] = nil
            }
            guard links.count < Self.maxLinks else {
                close(fd)
                continue
            }
            let link = ListenerLink(
                fd: fd, uid: uid, name: Accounts.name(of: uid), device: device, logger: logger, post: post)
            links[fd] = link
            logger.info("\(link.name)'s announce connected as a listener")
        }
    }

    /// The uid whose daemon items are heard through now.
    var listenerUID: uid_t? {
        if let configuredListener { return Accounts.user(named: configuredListener)?.uid }
        return readWholeFile(seat, limit: 65536).flatMap(Self.activeUID)
    }

    /// `ACTIVE_UID=N` of a logind seat file; nil when no session is active.
    static func activeUID(_ bytes: [UInt8]) -> uid_t? {
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("ACTIVE_UID=") {
            return uid_t(line.dropFirst("ACTIVE_UID=".count))
        }
        return nil
    }

    /// Plays `item` through the listener's daemon; false when there is none connected, or the
    /// item is not one that can go (speech, a URL, a live stream play on the device).
    func play(_ item: QueueItem, media: MediaDirectory, tuning: EngineDriver.Tuning, now: Double) -> Bool {
        // Given up there once (the listener's queue held it): this time it plays on the device.
        if links.values.contains(where: { $0.gaveUp.remove(item.id) != nil }) { return false }
        guard let name = item.clip.media, item.clip.url == nil, item.clip.speech == nil, item.clip.stream == nil,
            let uid = listenerUID, let link = links.values.first(where: { $0.uid == uid && !$0.isDead })
        else { return false }
        return link.play(item, file: media.filePath(name), tuning: tuning, now: now)
    }

    /// When a forwarded play that has not started is given up (`giveUpWaiting`), if any.
    var nextDeadline: Double? { links.values.compactMap(\.nextDeadline).min() }

    /// Forwarded plays that did not start in time come back, to play on the device.
    func giveUpWaiting(now: Double) {
        for link in links.values { link.giveUpWaiting(now: now) }
    }

    /// Stops a forwarded play; false when `id` plays here on no listener. `now`: the daemon is
    /// stopping and waits for no answer: the play ends at once with what was heard.
    func stop(_ id: ItemID, now: Bool = false) -> Bool {
        links.values.first { $0.plays(id) }?.stop(id, now: now) ?? false
    }

    /// Drops the links that went away; what they played comes back as lost.
    func reap() {
        for (fd, link) in links where link.isDead {
            link.close(reason: "its connection ended")
            links[fd] = nil
        }
    }

    func stopAll() {
        for link in links.values { link.close(reason: "the system queue is stopping") }
        links.removeAll()
        socket.stop()
    }
}

extension ListenerRoute: DaemonService {
    func stop() { stopAll() }
}
