import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import FoundationEssentials
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Owns the queue (the main lane's scheduler and the mixed lane), the session policy, each
/// item's lifecycle and the devices; carries out the models' effects on the engine driver and
/// tells the clients through the event hub. Its handlers take one request or report each; the
/// rules are the models' (`Scheduler`, `MixedLane`, `SessionPolicy`, `ItemLifecycle`,
/// `DeviceSupervisor`).
final class QueueController {
    /// The parts of the daemon it works through (QueueController+Parts.swift).
    let parts: Parts
    var configuration: Configuration
    let hub = EventHub()
    typealias Configuration = Daemon.Configuration

    /// The main lane (the scheduler) and the mixed lane (mixable sessions and alerts, which start
    /// at once over it), behind one interface.
    var lanes = Lanes()
    /// The quiet switch and quiet hours; consulted whenever an item is about to start.
    var quiet = QuietMode(localMinutes: QuietMode.systemLocalMinutes)
    /// Who mixes, who is interrupted, who is ducked (DESIGN §3).
    var policy = SessionPolicy()
    var devices = DeviceSupervisor()
    /// Rates, frames heard and quarter marks of the plays, from the engine driver's reports.
    var meter = PlayMeter()
    /// Each live item's state, made as it is accepted or restored (a final one leaves, `finish`):
    /// it alone decides what is announced of it: its start, its interruptions, its one outcome.
    var lifecycles: [ItemID: ItemLifecycle] = [:]
    var terminating = false
    /// The daemon on the session bus (MPRIS); nil in tests that run without one.
    var sessionBus: SessionBusPresence?
    /// The system queue's listeners' daemons: main-lane plays go through the listener's (DESIGN §8).
    var listenerRoute: ListenerRoute?
    /// Other applications' audio: who lowers it, who watches it, what it plays.
    var otherAudio: OtherAudioParts
    /// The main lane's last playing item's `--notify-others` (DESIGN §3, Other players).
    var mainLaneNotifiesOthers = true
    /// What the spool kept, until it is taken back.
    var restored = Restored()

    init(
        runtime: RuntimeDirectory, configuration: Configuration, logger: Logger, clock: @escaping WallClock,
        spool: Spool, driver: EngineDriver, probeDevice: @escaping Daemon.DeviceProber, downloads: Downloads? = nil,
        ducker: OtherAudioDucker? = nil
    ) {
        parts = Parts(
            runtime: runtime, logger: logger, clock: clock, probeDevice: probeDevice, spool: spool, driver: driver,
            downloads: downloads)
        otherAudio = OtherAudioParts(ducker: ducker)
        self.configuration = configuration
    }

    // MARK: lifecycle

    /// Takes back what the spool kept and the quiet and paused state; nothing plays yet.
    func restore(now: Double) {
        spool.pruneOutcomes(now: now)
        var restored = spool.load()
        for problem in restored.problems { logger.warning("\(problem)") }
        restored.items = endUnpersistedStreams(restored.items, now: now)
        if configuration.access == nil { restored.items = endForwarded(restored.items, now: now) }
        self.restored.mixed = restored.items.filter { $0.audioSession.lane == .mixed }
        lanes.main = Scheduler(restoring: restored.items.filter { $0.audioSession.lane == .main })
        for item in restored.items { lifecycles[item.id] = ItemLifecycle(interrupted: item.interrupted) }
        for item in restored.items { if let owner = item.owner { hub.owners[item.id] = owner } }
        // A single item's own entry says its request; a request of several, its committed record
        // (in order, with the items that ended before the commit).
        for item in restored.items {
            if let key = item.requestKey { self.restored.requests[key, default: []].append(item.id) }
        }
        if let committed = restored.committed { self.restored.requests[committed.key] = committed.ids }
        // Downloads a restart cut short go on (with a Range where the server takes one).
        for item in restored.items { downloads?.ensure(item) }
        // A queue the user paused stays paused across a crash or a restart.
        if access(runtime.pausedMarkerPath, F_OK) == 0 {
            _ = lanes.main.pause(now: now)
            logger.info("the queue is paused (announce resume lets it go on)")
        }
        quiet = QuietMode(
            setting: runtime.loadQuietSetting(), hours: configuration.quietHours, level: configuration.quietLevel,
            localMinutes: configuration.localMinutes)
        let quietNow = quiet.state(at: now)
        if quietNow.quiet || !quietNow.hours.isEmpty {
            let hours =
                quietNow.hours.isEmpty
                ? "" : "; quiet hours \(quietNow.hours.map(\.description).joined(separator: ", "))"
            logger.info("quiet mode is \(quietNow.quiet ? "on" : "off") (\(quietNow.reason))\(hours)")
        }
        if !restored.items.isEmpty { logger.info("restored \(restored.items.count) item(s) from \(spool.directory)") }
    }

    /// Starts what was restored.
    func start(now: Double) {
        for item in restored.mixed.sorted(by: { ($0.arrival, $0.id) < ($1.arrival, $1.id) }) {
            startMixed(item, alert: false, now: now)
        }
        carryOut(lanes.main.advance(now: now), now: now)
    }

    /// The daemon is stopping: the playing items keep their heard positions, as if paused.
    func stopPlays(mailbox: Mailbox) {
        let now = clock()
        terminating = true
        if isPlaying {
            carryOut(lanes.main.pause(now: now), now: now)
            if let id = lanes.main.playing?.id { stopPlay(id) }
            carryOut(lanes.mixed.stopAll(), now: now)
            while isPlaying, mailbox.wakeup.wait(milliseconds: 2000) {
                for report in mailbox.take() { handle(report) }
            }
        }
    }

    func setPausedMarker(_ paused: Bool) {
        do { try runtime.setPaused(paused) } catch { logger.error("\(error.description)") }
    }

    // MARK: time

    /// The the scheduler's next deadline, the device's idle grace or its retry.
    var nextDeadline: Double? {
        [lanes.main.nextDeadline, devices.closeAt, devices.retryAt, listenerRoute?.nextDeadline].compactMap { $0 }.min()
    }

    /// The the scheduler's deadlines, the device's idle grace and its retry.
    func handleTimers(now: Double) {
        if let deadline = listenerRoute?.nextDeadline, deadline <= now { listenerRoute?.giveUpWaiting(now: now) }
        if let deadline = lanes.main.nextDeadline, deadline <= now {
            carryOut(lanes.main.advance(now: now), now: now)
        }
        if devices.closeIsDue(now: now) {
            if !isPlaying { driver.closeDevices() }
        }
        if devices.retryIsDue(now: now) {
            // Try the device again: the held item, then the mixed streams that wait for it.
            var effects = lanes.main.release(.deviceBusy, now: now)
            effects += lanes.main.release(.deviceLost, now: now)
            carryOut(effects, now: now)
            carryOut(
                lanes.mixed.retryDevice(now: now) {
                    policy[$0].map { $0.isInterrupted || $0.awaitsResume } == true || heldByCall($0)
                },
                now: now)
        }
    }

    /// Nothing queued, mixing or held for a device to close.
    var isIdle: Bool { lanes.main.count == 0 && lanes.mixed.isEmpty && !hub.isHolding }

    var pendingIDs: Set<ItemID> {
        Set(([lanes.main.playing].compactMap { $0 } + lanes.main.ready + lanes.main.scheduled).map(\.id))
            .union(lanes.mixed.ids)
            .union(hub.heldIDs)
    }

    /// Something is playing (or being stopped) on some device.
    var isPlaying: Bool { lanes.main.playing != nil || lanes.mixed.isPlaying }

    /// The config file's quiet hours and level, duck level, silence rule and loudness apply from the next item on.
    func rereadConfigurationIfChanged() {
        guard let path = configuration.configPath else { return }
        let stamp = FileStamp(path)
        guard stamp != configuration.configStamp else { return }
        configuration.configStamp = stamp
        let (reread, warnings) = UserConfiguration.reload(path: path)
        for warning in warnings { logger.warning("\(warning)") }
        guard let user = reread else { return }
        configuration.quietHours = user.quietHours
        configuration.duckLevel = user.duckLevel
        configuration.silence = user.silence
        configuration.loudness = user.loudness
        configuration.quietLevel = user.quietLevel
        configuration.wakeUp = user.wakeUp
        configuration.keepOpen = user.keepOpen
        quiet.level = user.quietLevel
        configuration.interruptingRoles = user.interruptingRoles
        quiet.hours = user.quietHours
        let hours = user.quietHours.map(\.description).joined(separator: ", ")
        logger.info("\(path) reread: quiet hours \(hours.isEmpty ? "none" : hours), duck level \(user.duckLevel) dB")
    }

    /// Keeps daemon.log bounded; checked at start and as each item ends.
    static func rotateLog(_ runtime: RuntimeDirectory, _ logger: Logger) {
        if runtime.rotateLogIfNeeded() { logger.info("the log goes on from \(runtime.logPath).1") }
    }
}
