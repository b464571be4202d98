import AnnounceEngine
import AnnounceModel
import AnnounceNetwork
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import CPosix
import FoundationEssentials
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The per-user queue owner's entry point and lifecycle: it takes the runtime directory's
/// lock, blocks the termination signals, opens the spool and the socket, then hands over to
/// the control loop (`ControlLoop`), which routes to the queue controller (`QueueController`)
/// until a signal or the idle exit; then it stops the plays and gives everything back.
public final class Daemon {
    public struct Configuration: Sendable {
        /// Where items without `--device` play.
        public var device: DeviceName
        /// Exit after this long with nothing queued and nobody connected (auto-started daemons).
        public var idleExit: Double?
        /// Told "ready" once the socket listens (the auto-starting client waits on it); set
        /// only for a daemon a client started.
        public var ready: ReadyPipe?
        /// The clients' spawn lock, held by `announce daemon` across a takeover and released once
        /// the socket listens: a client that finds no daemon meanwhile waits, then finds this one.
        public var spawnLock: SpawnLock?
        /// How long the device stays open after the queue empties (`keep-open`). The default is
        /// short and writes nothing, because an open stream keeps the desktop's role ducking (and
        /// other programs) waiting; longer, it plays silence meanwhile.
        public var keepOpen = UserConfiguration.defaultKeepOpen
        /// Quiet hours from the config file.
        public var quietHours: [QuietHours]
        /// What quiet mode does, from the config file: silences, or plays lower (a night level).
        public var quietLevel = QuietLevel.silent
        /// Silence before the first item when the device opens, seconds (`wake-up`).
        public var wakeUp = 0.0
        /// The duck level from the config file, in dB (for the mixer's ducking).
        public var duckLevel: Double
        /// What `--skip-silence` cuts, from the config file.
        public var silence: SilenceRule = .default
        /// What a play's loudness is brought to when it does not say, from the config file.
        public var loudness = LoudnessTarget.standard
        /// Local time of day, for quiet hours (injectable for tests).
        public var localMinutes: QuietMode.LocalMinutes = QuietMode.systemLocalMinutes
        /// The user's config file, reread when it has changed (checked each time the daemon
        /// wakes): its quiet hours, duck level, silence rule and loudness apply from then on (its device, at
        /// the next start).
        public var configPath: String?
        /// The file as it was when last read: the daemon rereads it when this changes (one stat).
        public var configStamp: FileStamp?
        /// Other applications' media roles that interrupt announce like a call (`[session] interrupting-roles`).
        public var interruptingRoles = OtherAudioScene.defaultInterruptingRoles
        /// The limit of the speech render cache (`[speech] cache-size`; 0: no cache).
        public var speechCacheBytes = UserConfiguration.defaultSpeechCacheBytes
        /// The system queue's `[system]` settings (DESIGN §8); nil for a user's own daemon.
        public var system: SystemSettings? {
            didSet { access = system.map { SystemAccess(settings: $0, daemonUID: getuid()) } }
        }
        /// Who may do what on the system queue, from `system`.
        private(set) var access: SystemAccess?
        /// A user's permanent daemon: offered to the system queue at this directory as its
        /// listener (`SystemQueueLink`); nil: not.
        public var systemQueueDirectory: String?
        /// How long its stop may take, services and exit, before the process ends anyway (every
        /// item is spooled; a playing one may resume from its last checkpoint); nil: unbounded
        /// (a daemon inside a test's process).
        public var stopSeconds: Double?
        /// The caller's services, started once the socket listens (zones' bridge: it is a client
        /// of this socket), stopped before it closes.
        public var services: [(name: String, start: @Sendable () -> (any DaemonService)?)] = []

        public init(
            device: DeviceName = UserConfiguration.defaultDevice, idleExit: Double? = nil, ready: ReadyPipe? = nil,
            quietHours: [QuietHours] = [], duckLevel: Double = UserConfiguration.defaultDuckLevel
        ) {
            self.device = device
            self.idleExit = idleExit
            self.ready = ready
            self.quietHours = quietHours
            self.duckLevel = duckLevel
        }
    }

    let runtime: RuntimeDirectory
    let configuration: Configuration
    let logger: Logger
    private let clock: WallClock
    /// Tests' virtual time: moves the clock to a deadline the loop would only wait for.
    private let skipTo: (@Sendable (Double) -> Void)?
    private let openOutput: PlaybackEngine.OutputOpener
    /// What a play reads; nil: the item's file.
    private let makeSource: EngineDriver.SourceMaker?
    /// Whether a device can play here, asked when an item is accepted.
    typealias DeviceProber = (_ device: DeviceName, _ environment: [String: String]?) throws(AnnounceError) -> Void
    private let probeDevice: DeviceProber
    /// Lowers other applications' streams for duck-others items (off in in-process tests: they must not touch a desktop's server).
    private let ducksOtherAudio: Bool

    /// The daemon on the real clock, ALSA and device checks.
    public convenience init(runtime: RuntimeDirectory, configuration: Configuration, logger: Logger) {
        self.init(
            runtime: runtime, configuration: configuration, logger: logger, clock: SystemClock.wall,
            ducksOtherAudio: true)
    }

    /// `skipTo`: a test's clock, which goes to a deadline at once when nothing is in flight
    /// and the loop would only wait for it (backoff, expiry and idle exit cost no real time).
    init(
        runtime: RuntimeDirectory, configuration: Configuration, logger: Logger,
        clock: @escaping WallClock, skipTo: (@Sendable (Double) -> Void)? = nil,
        openOutput: @escaping PlaybackEngine.OutputOpener = PlaybackEngine.defaultOpener,
        probeDevice: @escaping DeviceProber = { device, environment throws(AnnounceError) in
            try BoundedProbe.check { () throws(AnnounceError) in
                try Outputs.backend.probe(device, environment: environment)
            }
        },
        makeSource: EngineDriver.SourceMaker? = nil, ducksOtherAudio: Bool = false
    ) {
        self.runtime = runtime
        self.ducksOtherAudio = ducksOtherAudio
        self.probeDevice = probeDevice
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.skipTo = skipTo
        self.openOutput = openOutput
        self.makeSource = makeSource
    }

    /// Runs until SIGTERM/SIGINT/SIGHUP or the idle exit. Returns false when another
    /// daemon already owns this runtime directory (and tells the auto-starter so).
    @discardableResult
    public func run() throws(AnnounceError) -> Bool {
        // Before any thread starts, so every thread inherits the blocked signals.
        let signals = announce_termination_signalfd()
        guard signals >= 0 else { throw .internal("signalfd: \(systemErrorMessage(-signals))") }
        guard let lockFD = try acquireLock() else {
            notifyReady("running")
            return false
        }
        defer { close(lockFD) }
        // Paths arrive absolute; holding the starter's directory would keep it busy.
        _ = chdir("/")
        QueueController.rotateLog(runtime, logger)
        let spool = try Spool(runtime: runtime)
        // setenv is not thread-safe: done before the engine driver and playback threads exist.
        ALSAOutput.processEnvironment
        let mailbox = try Mailbox()
        let now = clock()
        // The services in start order; stopped in the reverse order when the loop returns.
        let services = ServiceGroup(logger: logger)
        defer {
            services.stopAll(
                limit: configuration.stopSeconds.map { [logger] seconds in
                    StopLimit(seconds: seconds) { holder in
                        logger.error("stopping took over \(Int(seconds)) s, held by \(holder): exiting now")
                        _exit(0)
                    }
                })
        }
        let downloads = Downloads(media: spool.media)
        let driver = try services.start("engine") {
            EngineDriver(
                openOutput: openOutput, makeSource: makeSource,
                speechCache: SpeechCache.user(limitBytes: configuration.speechCacheBytes),
                media: spool.media, downloads: downloads,
                leveler: Leveler(cache: LoudnessCache.user { [logger] in logger.warning("\($0)") }) { [logger] in
                    logger.info("\($0)")
                }
            ) {
                mailbox.post($0)
            }
        }!
        // Started before the socket listens: it first restores what a daemon killed mid-duck lowered.
        let ducker = try services.start("other-audio ducker") { () throws(AnnounceError) in
            ducksOtherAudio ? try OtherAudioDucker(journalPath: runtime.otherAudioJournalPath, logger: logger) : nil
        }
        let controller = QueueController(
            runtime: runtime, configuration: configuration, logger: logger, clock: clock,
            spool: spool, driver: driver, probeDevice: probeDevice, downloads: downloads,
            ducker: ducker)
        controller.otherAudioWatcher = try services.start("other-audio watcher") { () throws(AnnounceError) in
            ducksOtherAudio ? try OtherAudioWatcher(logger: logger) { mailbox.post($0) } : nil
        }
        controller.restore(now: now)
        try services.start("clients") { controller.hub }
        let listener = try services.start("socket") { () throws(AnnounceError) in
            try SocketListener(path: runtime.socketPath, group: configuration.access?.group)
        }!
        logger.info("listening on \(runtime.socketPath), device '\(configuration.device)', pid \(getpid())")
        notifyReady("ready")
        // The caller's (zones' bridge: a client of this socket).
        for service in configuration.services {
            if let started = service.start() { services.add(service.name, started) }
        }
        if let access = configuration.access {
            controller.listenerRoute = try services.start("listener socket") { () throws(AnnounceError) in
                try ListenerRoute(
                    path: runtime.listenerSocketPath, listener: access.settings.listener, device: configuration.device,
                    logger: logger
                ) { mailbox.post($0) }
            }
        }
        controller.start(now: now)
        controller.sessionBus = try services.start("session bus") { () throws(AnnounceError) in
            try SessionBusPresence(
                environment: RuntimeDirectory.processEnvironment("DBUS_SESSION_BUS_ADDRESS"),
                journalPath: runtime.pausedPlayersJournalPath, logger: logger)
        }
        // Stopped first: the playing items keep the positions heard, as if paused.
        try services.start("plays") { PlaysAtStop(controller: controller, mailbox: mailbox) }
        let link = configuration.systemQueueDirectory.flatMap { SystemQueueLink(systemDirectory: $0, logger: logger) }
        link?.connect(hub: controller.hub)
        ControlLoop(
            listener: listener.fd, signals: signals, mailbox: mailbox, controller: controller,
            idleExit: configuration.idleExit, clock: clock, skipTo: skipTo, systemQueue: link
        ).run()
        logger.info("stopping: the spool keeps \(controller.lanes.main.count) item(s)")
        return true
    }

    /// The runtime directory's lock, or nil when another daemon holds it.
    private func acquireLock() throws(AnnounceError) -> Int32? {
        let lockFD = open(runtime.daemonLockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else {
            throw .unavailable("cannot open \(runtime.daemonLockPath): \(systemErrorMessage(errno))")
        }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let holder =
                readWholeFile(runtime.daemonLockPath).map { String(decoding: $0.filter { $0 > 32 }, as: UTF8.self) }
                ?? "?"
            logger.info("another daemon (pid \(holder)) owns \(runtime.path)")
            close(lockFD)
            return nil
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(lockFD, 0)
        _ = pid.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, $0.count, 0) }
        return lockFD
    }

    private func notifyReady(_ word: String) {
        configuration.spawnLock?.release()
        configuration.ready?.say(word)
    }

}

/// The daemon's listening socket: closed, and its path removed, when the daemon stops.
final class SocketListener: DaemonService {
    let fd: Int32
    private let path: String

    /// The user's own daemon's is 0600; the system queue's 0660, for its `group`; its
    /// listeners' 0666 (`mode`).
    init(path: String, group: gid_t? = nil, mode: mode_t? = nil) throws(AnnounceError) {
        // Made listening under another name, then renamed into place: whoever watches for the
        // name (a user's daemon, by inotify) never finds one that refuses connections yet.
        let making = path + ".new"
        unlink(making)
        let fd = announce_unix_listen(making, 1024, mode ?? (group == nil ? 0o600 : 0o660))
        guard fd >= 0 else { throw .unavailable("cannot listen on \(path): \(systemErrorMessage(-fd))") }
        if let group, chown(making, uid_t.max, group) != 0 {
            close(fd)
            unlink(making)
            throw .unavailable("cannot give \(path) to group \(group): \(systemErrorMessage(errno))")
        }
        guard rename(making, path) == 0 else {
            close(fd)
            unlink(making)
            throw .unavailable("cannot listen on \(path): \(systemErrorMessage(errno))")
        }
        self.fd = fd
        self.path = path
    }

    func stop() {
        close(fd)
        unlink(path)
    }
}

/// What plays when the daemon stops: paused where it was heard, so the spool keeps it there.
private final class PlaysAtStop: DaemonService {
    let controller: QueueController
    let mailbox: Mailbox

    init(controller: QueueController, mailbox: Mailbox) {
        self.controller = controller
        self.mailbox = mailbox
    }

    func stop() { controller.stopPlays(mailbox: mailbox) }
}

extension EngineDriver: DaemonService {
    func stop() { shutdown() }
}

extension EventHub: DaemonService {
    /// Sends what is still buffered and forgets every client.
    func stop() { closeAll() }
}

extension OtherAudioDucker: DaemonService {}
extension OtherAudioWatcher: DaemonService {}
extension SessionBusPresence: DaemonService {}

extension Daemon.Configuration {
    /// How the config file has `item` play: its silence rule, its loudness unless the item says,
    /// and `nightLevel` dB lower when quiet mode lowers it.
    func tuning(for item: QueueItem, nightLevel: Double? = nil) -> EngineDriver.Tuning {
        EngineDriver.Tuning(
            silence: silence, loudness: item.clip.loudness ?? loudness, nightLevel: nightLevel, wakeUp: wakeUp,
            keepsDeviceOpen: keepOpen > UserConfiguration.defaultKeepOpen
                && item.clip.devices(default: device).contains(device))
    }
}
