import AnnounceClient
import AnnounceModel
import AnnounceSystem
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The host's retained status (`announce/v1/status/HOST`): online with its zones, what plays,
/// how many wait, quiet and paused. It follows the daemon's events on a connection of its own
/// (`announce-zstat`) and publishes again only when the state changed.
final class StatusPublisher: @unchecked Sendable {
    let host: String
    let zones: [String]
    let runtime: RuntimeDirectory
    weak var bridge: ZoneBridge?
    private let last = Mutex<HostStatus?>(nil)

    /// The events after which the status may have changed.
    static let changes: Set<EventKind> = [
        .queued, .started, .finished, .paused, .resumed, .quiet,
        .interruptionBegan, .interruptionEnded
    ]

    init(host: String, zones: [String], runtime: RuntimeDirectory) {
        self.host = host
        self.zones = zones
        self.runtime = runtime
    }

    /// Starts following the daemon's events.
    func follow() {
        pthread_detach(
            startThread(named: "announce-zstat") { [self] in
                do throws(AnnounceError) {
                    guard let events = try DaemonClient.connect(autoStart: false, runtime: runtime) else { return }
                    _ = try events.call(.events)
                    publish(force: false)
                    while let message = try events.next(watching: false) {
                        if case .event(let event) = message, Self.changes.contains(event.event) {
                            publish(force: false)
                        }
                    }
                } catch {
                    bridge?.logger.warning("zones: the status no longer follows the daemon: \(error.description)")
                }
            })
    }

    /// The daemon's state now, published when it changed (or `force`: a new connection).
    func publish(force: Bool) {
        guard let bridge else { return }
        let daemon: DaemonStatus
        do {
            guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime),
                let status = try client.call(.status).status
            else { return }
            daemon = status
        } catch {
            return bridge.logger.warning("zones: no status from the daemon: \(error.description)")
        }
        let now = HostStatus(
            host: host, zones: zones, state: .online, playing: daemon.playing?.path,
            queued: daemon.queued.count + daemon.scheduled.count, quiet: daemon.quiet,
            paused: daemon.paused, time: SystemClock.wall())
        let changed = last.withLock { previous in
            defer { previous = now }
            return force || previous.map { !$0.sameState(as: now) } ?? true
        }
        if changed { send(now) }
    }

    /// The goodbye: its message id, nil when it could not be queued.
    func publishOffline() -> Int32? {
        send(HostStatus(host: host, zones: zones, state: .offline, stopped: true))
    }

    @discardableResult
    private func send(_ status: HostStatus) -> Int32? {
        do {
            return try bridge?.link.publish(
                ZoneTopic.status(host).name, JSONCoding.encode(status, orElse: "{}"), retain: true)
        } catch {
            bridge?.logger.error("zones: \(error.description)")
            return nil
        }
    }
}
