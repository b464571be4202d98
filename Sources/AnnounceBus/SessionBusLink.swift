import AnnounceModel
import AnnounceSystem
import CPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's presence on the session bus, on a thread of its own (`announce-bus`): its
/// lifecycle (`connect`, `stop`) and the hand-over from the control thread (`show`). The event
/// loop (`run`) only polls and dispatches; the handlers are MPRISPlayer (announce as a player)
/// and OtherPlayersWatcher (pausing the others).
public final class SessionBusLink: Sendable {
    /// What the control thread last asked for; the bus thread takes the latest only.
    private struct Wanted {
        var nowPlaying = NowPlaying.stopped
        var nonMixableActive = false
        var notifyOthers = true
        var stopping = false
        /// The control thread has told the queue's state once: until then, whether the activity
        /// lasts is not known (a killed daemon's paused players wait for it).
        var shown = false
    }

    /// Where the daemon is on the bus, for `status`.
    public let description: String
    private let wanted = Mutex(Wanted())
    private let wakeup: EventFD
    private let thread = Mutex<pthread_t?>(nil)

    private init(description: String, wakeup: EventFD) {
        self.description = description
        self.wakeup = wakeup
    }

    /// Joins the bus at `address` and starts the bus thread. `onControl` runs on that thread
    /// for each MPRIS control a client sends; `log` too.
    /// `journalPath`: where the players announce keeps paused are journalled (a killed daemon's are
    /// taken back from there).
    public static func connect(
        address: String, journalPath: String?, onControl: @escaping @Sendable (PlayerControl) -> Void,
        log: @escaping @Sendable (String) -> Void
    ) throws(AnnounceError) -> SessionBusLink {
        let bus = try Bus(address: address)
        let player = try MPRISPlayer(bus: bus, onControl: onControl)
        let others = try OtherPlayersWatcher(bus: bus, journalPath: journalPath, log: log)
        let link = SessionBusLink(
            description: "MPRIS player \(MPRISPlayer.busName) on the session bus \(address)", wakeup: try EventFD())
        let handlers = UncheckedHandlers(bus: bus, player: player, others: others, log: log)
        link.thread.withLock { $0 = startThread(named: "announce-bus") { link.run(handlers) } }
        return link
    }

    /// The queue's state now: what announce shows, whether a non-mixable session is active, and
    /// whether the main lane's last item lets other players resume (`--no-notify-others`: no).
    public func show(_ nowPlaying: NowPlaying, nonMixableActive: Bool, notifyOthers: Bool) {
        let changed = wanted.withLock { wanted in
            defer {
                (wanted.nowPlaying, wanted.nonMixableActive, wanted.notifyOthers, wanted.shown) = (
                    nowPlaying, nonMixableActive, notifyOthers, true
                )
            }
            return !wanted.shown || wanted.nowPlaying != nowPlaying || wanted.nonMixableActive != nonMixableActive
                || wanted.notifyOthers != notifyOthers
        }
        if changed { wakeup.signal() }
    }

    /// Resumes the players it paused, leaves the bus and ends the thread.
    public func stop() {
        wanted.withLock { $0.stopping = true }
        wakeup.signal()
        if let thread = thread.withLock({ $0 }) { pthread_join(thread, nil) }
    }

    /// The event loop: poll() on the bus's descriptor and the wake-up, with sd-bus's own timeout.
    private func run(_ handlers: UncheckedHandlers) {
        let bus = handlers.bus
        while true {
            let latest = wanted.withLock { $0 }
            if latest.stopping {
                handlers.others.setActive(false, notifyOthers: true)
                return
            }
            handlers.player.show(latest.nowPlaying)
            if latest.shown { handlers.others.setActive(latest.nonMixableActive, notifyOthers: latest.notifyOthers) }
            do { try bus.process() } catch {
                // The bus went away (its daemon ended): announce plays on without it.
                return handlers.log("left the session bus: \(error.description)")
            }
            var descriptors = [
                pollfd(fd: bus.fd, events: bus.events, revents: 0),
                pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)
            ]
            _ = poll(&descriptors, 2, Self.timeout(until: bus.deadline))
            if descriptors[1].revents != 0 { wakeup.drain() }
        }
    }

    private static func timeout(until deadline: UInt64?) -> Int32 {
        guard let deadline else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return deadline <= nowMicroseconds
            ? 0 : Int32(min((deadline - nowMicroseconds + 999) / 1000, UInt64(Int32.max)))
    }
}

/// The bus and its handlers, made on the control thread and then used by the bus thread alone.
private struct UncheckedHandlers: @unchecked Sendable {
    let bus: Bus
    let player: MPRISPlayer
    let others: OtherPlayersWatcher
    let log: @Sendable (String) -> Void
}
