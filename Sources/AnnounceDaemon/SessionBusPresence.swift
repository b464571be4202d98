import AnnounceBus
import AnnounceModel
import AnnounceSystem
import Logging
import Synchronization

/// The daemon on the session bus (DESIGN §3, Other players): joins it at start when there is
/// one (else says why in `status`, never an error), passes the MPRIS controls that clients send
/// to the control thread (which polls `wakeup`), and gives the bus thread the queue's state.
final class SessionBusPresence: Sendable {
    /// The MPRIS controls on their way from the bus thread to the control thread.
    private final class Inbox: Sendable {
        let wakeup: EventFD
        let controls = Mutex<[PlayerControl]>([])
        init() throws(AnnounceError) { wakeup = try EventFD() }
    }

    private let inbox: Inbox
    var wakeup: EventFD { inbox.wakeup }
    private let link: SessionBusLink?
    /// For `status`: where announce is on the bus, or why not.
    let description: String

    init(environment: String?, journalPath: String, logger: Logger) throws(AnnounceError) {
        let inbox = try Inbox()
        self.inbox = inbox
        switch SessionBusAddress.find(environment: environment) {
        case .none(let reason):
            link = nil
            description = reason
        case .found(let address):
            do {
                let link = try SessionBusLink.connect(
                    address: address, journalPath: journalPath,
                    onControl: { control in
                        inbox.controls.withLock { $0.append(control) }
                        inbox.wakeup.signal()
                    }, log: { logger.info("\($0)") })
                self.link = link
                description = link.description
            } catch {
                link = nil
                description = "not on the session bus: \(error.description)"
            }
        }
        logger.info("session bus: \(description)")
    }

    /// The controls clients sent since the last call.
    func take() -> [PlayerControl] {
        inbox.wakeup.drain()
        return inbox.controls.withLock { controls in
            defer { controls.removeAll() }
            return controls
        }
    }

    /// Joined: there is a bus thread to tell the queue's state.
    var isOnBus: Bool { link != nil }

    func show(_ nowPlaying: NowPlaying, nonMixableActive: Bool, notifyOthers: Bool) {
        link?.show(nowPlaying, nonMixableActive: nonMixableActive, notifyOthers: notifyOthers)
    }

    /// Resumes the players announce paused, and leaves the bus.
    func stop() { link?.stop() }
}
