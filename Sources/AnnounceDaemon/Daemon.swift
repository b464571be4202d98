import CPosix
import FoundationEssentials
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem
import AnnounceSources
import AnnounceOutput
import AnnounceEngine

/// The per-user queue owner: one control thread in poll() over the socket, the
/// clients, the player's mailbox and the termination signals. It sleeps with
/// no timeout while idle; the only timed wake-ups are the scheduler's next
/// deadline, the device's idle grace and the idle exit.
public final class Daemon {
    public struct Configuration: Sendable {
        /// Where items without `--device` play.
        public var device: String
        /// Exit after this long with nothing queued and nobody connected (auto-started daemons).
        public var idleExit: Double?
        /// Written "ready\n" once the socket listens (the auto-starting client waits on it).
        public var readyFD: Int32?
        /// The clients' spawn lock, held by `announce daemon` across a takeover and closed once
        /// the socket listens: a client that finds no daemon meanwhile waits, then finds this one.
        public var spawnLockFD: Int32?
        /// How long the device stays open after the queue empties: short, because an open
        /// stream keeps the desktop's role ducking (and other programs) waiting.
        public var deviceGrace: Double = 0.1
        /// Quiet hours from the config file.
        public var quietHours: [QuietHours]
        /// The duck level from the config file, in dB (for the mixer's ducking).
        public var duckLevel: Double
        /// Local time of day, for quiet hours (injectable for tests).
        public var localMinutes: QuietMode.LocalMinutes = QuietMode.systemLocalMinutes
        /// The user's config file, reread when it has changed (checked each time the daemon
        /// wakes): its quiet hours and duck level apply from then on (its device, at the next start).
        public var configPath: String?
        /// The file as it was when the configuration above was read from it.
        public var configStamp: FileStamp?

        public init(device: String = "default", idleExit: Double? = nil, readyFD: Int32? = nil,
                    quietHours: [QuietHours] = [], duckLevel: Double = UserConfiguration.defaultDuckLevel) {
            self.device = device
            self.idleExit = idleExit
            self.readyFD = readyFD
            self.quietHours = quietHours
            self.duckLevel = duckLevel
        }
    }

    let runtime: RuntimeDirectory
    var configuration: Configuration
    let logger: Logger
    private let clock: WallClock
    private let openOutput: PlaybackEngine.OutputOpener
    /// Whether a device can play here, asked when an item is accepted.
    typealias DeviceProber = (_ device: String, _ environment: [String: String]?) throws(AnnounceError) -> Void
    private let probeDevice: DeviceProber

    var scheduler = Scheduler()
    /// The quiet switch and quiet hours; consulted whenever an item is about to start.
    var quiet = QuietMode(localMinutes: QuietMode.systemLocalMinutes)
    var spool: Spool!
    var player: Player!
    var connections: [Int32: Connection] = [:]
    private var listener: Int32 = -1
    private var signals: Int32 = -1
    private var lockFD: Int32 = -1
    private var mailbox: Mailbox!
    private var mailboxFD: Int32 { mailbox.wakeup.fd }

    // What the control side knows about the play in progress.
    /// Sample rate of each item that has played, to turn its frames into seconds.
    private var rates: [String: Int] = [:]
    var playingTotal: Int64?
    var playingFrames: Int64 = 0
    private var lastMilestone: [String: Int] = [:]
    var details: [String: PlayDetails] = [:]
    /// Items interrupted and waiting to go on: their next play ends the interruption.
    var interruptedIDs: Set<String> = []
    var openDevices: Set<String> = []
    /// Every device something has started on: known to exist.
    var playedDevices: Set<String> = []
    /// Finished events held until the per-item device they played on is closed,
    /// so a waiting client finds that device's output complete.
    private var heldFinishes: [String: [Event]] = [:]
    var deviceCloseAt: Double?
    private var idleSince: Double?
    var terminating = false

    // The session layer (DESIGN §3).
    /// Who mixes, who is interrupted, who is ducked.
    var policy = SessionPolicy()
    /// Mixable sessions and alerts: they start at once, mixed over the main lane.
    var mixed: [String: MixedStream] = [:]
    /// Items whose play in progress has been announced `started` (a multi-route play starts once per device).
    private var startedPlays: Set<String> = []
    /// The main-lane item the scheduler preempted for each id about to play.
    private var preemptedFor: [String: String] = [:]
    /// Devices that failed mid-play: reopened with backoff until they are back.
    var lostDevices: Set<String> = []
    var deviceRetryAt: Double?
    var deviceRetryDelay = Daemon.firstRetryDelay
    /// Who holds the busy device (`busy, held by pid 1234 (firefox)`), for waiting clients.
    var busyReason: String?
    private static let firstRetryDelay = 0.25
    static let longestRetryDelay = 4.0
    /// Scheduler hold keys.
    static let busyHold = "device-busy", lostHold = "device-lost"
    static let resumeHold = "waiting for announce resume"

    struct MixedStream {
        var item: QueueItem
        var isAlert: Bool
        /// A play is in progress on the player.
        var playing = false
        /// Paused by an interruption, or waiting for its device.
        var waiting: Waiting?
        /// Why we stopped the play in progress.
        var stopIntent: StopIntent?
        /// Frames heard in the play in progress.
        var frames: Int64 = 0

        enum Waiting { case interrupted, device }
        enum StopIntent: Equatable { case interrupt, end(Outcome) }
    }

    /// The daemon on the real clock, ALSA and device checks.
    public convenience init(runtime: RuntimeDirectory, configuration: Configuration, logger: Logger) {
        self.init(runtime: runtime, configuration: configuration, logger: logger, clock: SystemClock.wall)
    }

    init(runtime: RuntimeDirectory, configuration: Configuration, logger: Logger,
                clock: @escaping WallClock,
                openOutput: @escaping PlaybackEngine.OutputOpener = { device, request throws(AnnounceError) in
                    try ALSAOutput(device: device, request: request)
                },
                probeDevice: @escaping DeviceProber = { device, environment throws(AnnounceError) in
                    try BoundedProbe.check { () throws(AnnounceError) in try DeviceProbe.check(device, environment: environment) }
                }) {
        self.runtime = runtime
        self.probeDevice = probeDevice
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.openOutput = openOutput
    }

    /// Runs until SIGTERM/SIGINT/SIGHUP or the idle exit. Returns false when another
    /// daemon already owns this runtime directory (and tells the auto-starter so).
    @discardableResult
    public func run() throws(AnnounceError) -> Bool {
        // Before any thread starts, so every thread inherits the blocked signals.
        signals = announce_termination_signalfd()
        guard signals >= 0 else { throw .internal("signalfd: \(systemErrorMessage(-signals))") }
        guard try acquireLock() else {
            notifyReady("running")
            return false
        }
        // Paths arrive absolute; holding the starter's directory would keep it busy.
        _ = chdir("/")
        rotateLog()
        configStamp = configuration.configStamp
        spool = try Spool(runtime: runtime)
        let now = clock()
        spool.pruneOutcomes(now: now)
        let restored = spool.load()
        for problem in restored.problems { logger.warning("\(problem)") }
        let restoredMixed = restored.items.filter { $0.audioSession.lane == .mixed }
        scheduler = Scheduler(restoring: restored.items.filter { $0.audioSession.lane == .main })
        interruptedIDs = Set(restored.items.filter(\.interrupted).map(\.id))
        // A queue the user paused stays paused across a crash or a restart.
        if access(runtime.pausedMarkerPath, F_OK) == 0 {
            _ = scheduler.pause(now: now)
            logger.info("the queue is paused (announce resume lets it go on)")
        }
        quiet = QuietMode(setting: runtime.loadQuietSetting(), hours: configuration.quietHours,
                          localMinutes: configuration.localMinutes)
        let quietNow = quiet.state(at: now)
        if quietNow.quiet || !quietNow.hours.isEmpty {
            let hours = quietNow.hours.isEmpty ? "" : "; quiet hours \(quietNow.hours.joined(separator: ", "))"
            logger.info("quiet mode is \(quietNow.quiet ? "on" : "off") (\(quietNow.reason))\(hours)")
        }
        if !restored.items.isEmpty { logger.info("restored \(restored.items.count) item(s) from \(spool.directory)") }

        // setenv is not thread-safe: done before the player and playback threads exist.
        ALSAOutput.processEnvironment
        let mailbox = try Mailbox()
        self.mailbox = mailbox
        player = Player(openOutput: openOutput) { mailbox.post($0) }
        unlink(runtime.socketPath)  // stale: we hold the lock
        listener = announce_unix_listen(runtime.socketPath, 1024)
        guard listener >= 0 else {
            throw .unavailable("cannot listen on \(runtime.socketPath): \(systemErrorMessage(-listener))")
        }
        logger.info("listening on \(runtime.socketPath), device '\(configuration.device)', pid \(getpid())")
        notifyReady("ready")
        for item in restoredMixed.sorted(by: { ($0.arrival, $0.id) < ($1.arrival, $1.id) }) { startMixed(item, alert: false, now: now) }
        apply(scheduler.advance(now: now), now: now)
        loop()
        shutdown()
        return true
    }

    // MARK: lifecycle

    private func acquireLock() throws(AnnounceError) -> Bool {
        lockFD = open(runtime.daemonLockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw .unavailable("cannot open \(runtime.daemonLockPath): \(systemErrorMessage(errno))") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let holder = readWholeFile(runtime.daemonLockPath).map { String(decoding: $0.filter { $0 > 32 }, as: UTF8.self) } ?? "?"
            logger.info("another daemon (pid \(holder)) owns \(runtime.path)")
            return false
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(lockFD, 0)
        _ = pid.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, $0.count, 0) }
        return true
    }

    private func notifyReady(_ word: String) {
        if let lock = configuration.spawnLockFD { close(lock) }
        guard let fd = configuration.readyFD else { return }
        let bytes = Array((word + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private func shutdown() {
        logger.info("stopping: the spool keeps \(scheduler.count) item(s)")
        // The playing item keeps its heard position, as if paused.
        let now = clock()
        terminating = true
        if scheduler.playing != nil || mixed.values.contains(where: \.playing) {
            apply(scheduler.pause(now: now), now: now)
            if let id = scheduler.playing?.id { player.stop(id) }
            for (id, stream) in mixed where stream.playing {
                mixed[id]?.stopIntent = .interrupt
                player.stop(id)
            }
            while scheduler.playing != nil || mixed.values.contains(where: \.playing), waitForMailbox(milliseconds: 2000) {
                drainMailbox()
            }
        }
        player.shutdown()
        close(listener)
        unlink(runtime.socketPath)
        for connection in connections.values { connection.flush() }
        connections.removeAll()
        close(lockFD)
    }

    private func setPausedMarker(_ paused: Bool) {
        do { try runtime.setPaused(paused) } catch { logger.error("\(error.description)") }
    }

    private func waitForMailbox(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: mailboxFD, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }

    // MARK: the loop

    private func loop() {
        var descriptors: [pollfd] = []
        var order: [Int32] = []
        while !terminating {
            descriptors.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: signals, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: mailboxFD, events: Int16(POLLIN), revents: 0))
            // Out of descriptors: new clients wait in the backlog a moment instead of spinning the loop.
            let acceptPaused = acceptResumeAt.map { clock() < $0 } ?? false
            descriptors.append(pollfd(fd: acceptPaused ? -1 : listener, events: Int16(POLLIN), revents: 0))
            for (fd, connection) in connections {
                descriptors.append(pollfd(fd: fd, events: Int16(POLLIN) | (connection.wantsToWrite ? Int16(POLLOUT) : 0), revents: 0))
                order.append(fd)
            }
            let timeout = pollTimeout(now: clock())
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR {
                logger.critical("poll failed: \(systemErrorMessage(errno))")
                return
            }
            // Whatever woke the loop may start an item: quiet hours and duck level as the file says now.
            rereadConfigurationIfChanged()
            if descriptors[0].revents != 0 { handleSignals() }
            if descriptors[1].revents != 0 { drainMailbox() }
            if descriptors[2].revents != 0 { acceptClients() }
            for (index, fd) in order.enumerated() where descriptors[index + 3].revents != 0 {
                guard let connection = connections[fd] else { continue }
                if descriptors[index + 3].revents & Int16(POLLOUT) != 0 { connection.flush() }
                if descriptors[index + 3].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { serve(connection) }
            }
            reapConnections()
            handleTimers(now: clock())
            reportWaits(now: clock())
        }
    }

    private func pollTimeout(now: Double) -> Int32 {
        var deadline = scheduler.nextDeadline
        for candidate in [deviceCloseAt, idleDeadline, deviceRetryAt, acceptResumeAt] {
            if let candidate { deadline = min(deadline ?? candidate, candidate) }
        }
        guard let deadline else { return -1 }
        // Clamped as a Double first: a far deadline must not trap in the conversion.
        return Int32(min(max(0, ((deadline - now) * 1000).rounded(.up)), Double(Int32.max)))
    }

    private var idleDeadline: Double? {
        guard let idleExit = configuration.idleExit, let idleSince else { return nil }
        return idleSince + idleExit
    }

    private func handleTimers(now: Double) {
        if let deadline = scheduler.nextDeadline, deadline <= now {
            apply(scheduler.advance(now: now), now: now)
        }
        if let closeAt = deviceCloseAt, closeAt <= now {
            deviceCloseAt = nil
            if !isPlaying { player.closeDevices() }
        }
        if let retryAt = deviceRetryAt, retryAt <= now {
            // Try the device again: the held item, then the mixed streams that wait for it.
            deviceRetryAt = nil
            var effects = scheduler.release(Self.busyHold, now: now)
            effects += scheduler.release(Self.lostHold, now: now)
            apply(effects, now: now)
            for (id, stream) in mixed where stream.waiting == .device {
                if stream.item.heardFrames == 0, let expire = stream.item.expireAfter, stream.item.arrival + expire <= now {
                    // Never heard, and its --expire has passed while the device was busy or gone.
                    let seconds = expire == expire.rounded() ? String(Int64(expire)) : String(expire)
                    endMixed(id, Outcome(.expired, reason: "not started within \(seconds)s"), now: now)
                } else if policy[id].map({ $0.isInterrupted || $0.awaitsResume }) == true {
                    mixed[id]?.waiting = .interrupted
                } else {
                    playMixed(id)
                }
            }
        }
        let idle = scheduler.count == 0 && mixed.isEmpty && connections.isEmpty && heldFinishes.isEmpty
        if !idle { idleSince = nil } else if idleSince == nil { idleSince = now }
        if let deadline = idleDeadline, deadline <= now {
            logger.info("idle for \(configuration.idleExit ?? 0) s; exiting")
            terminating = true
        }
    }

    private func handleSignals() {
        while case let signal = announce_read_signal(signals), signal != 0 {
            logger.info("signal \(signal) received")
            terminating = true
        }
    }

    private func acceptClients() {
        while true {
            let fd = announce_unix_accept(listener)
            if fd == -EINTR { continue }
            guard fd >= 0 else {
                if fd == -EMFILE || fd == -ENFILE {
                    if acceptResumeAt == nil { logger.warning("accept failed: \(systemErrorMessage(-fd)); new clients wait") }
                    acceptResumeAt = clock() + Self.acceptPause
                } else if fd != -EAGAIN {
                    logger.warning("accept failed: \(systemErrorMessage(-fd))")
                }
                return
            }
            acceptResumeAt = nil
            connections[fd] = Connection(fd: fd)
        }
    }

    /// How long the listener rests after running out of descriptors.
    static let acceptPause = 0.1
    private var acceptResumeAt: Double?

    private func reapConnections() {
        for (fd, connection) in connections where connection.dead {
            connections[fd] = nil
        }
    }

    // MARK: requests

    private func serve(_ connection: Connection) {
        let (lines, oversized) = connection.readLines()
        for line in lines where !connection.closing {
            handle(line, from: connection)
        }
        if oversized && !connection.closing {
            connection.sendAndClose(WireProtocol.encode(
                Reply.failure(64, "request line longer than \(WireProtocol.maxLineBytes) bytes")))
        }
    }

    private struct VersionProbe: Decodable { var v: Int? }

    private func handle(_ line: ArraySlice<UInt8>, from connection: Connection) {
        let request: Request
        do {
            guard let version = try WireProtocol.decode(VersionProbe.self, from: line).v else {
                return reject(connection, "malformed request: no protocol version \"v\"")
            }
            guard version == WireProtocol.version else {
                return reject(connection, "unsupported protocol version \(version); this daemon speaks \(WireProtocol.version)")
            }
            request = try WireProtocol.decode(Request.self, from: line)
        } catch let error as DecodingError {
            return reject(connection, "malformed request: \(Self.describe(error))")
        } catch {
            return reject(connection, "malformed request: not a JSON object")
        }
        // Its client gave up (a stopped daemon told it "not done", exit 69) and left: doing it
        // now would make a retry do it twice. Reading requests are moot; a cancel is always
        // safe (it ends what its own client queued: the Ctrl-C handler sends one and exits).
        if ![.cancel, .status, .wait, .events].contains(request.op), connection.peerHungUp {
            return logger.warning("dropped the \(request.op.rawValue) request of a client that already left")
        }
        let now = clock()
        switch request.op {
        case .play: enqueue(request, from: connection, now: now)
        case .alert: alert(request, from: connection, now: now)
        case .wait: wait(for: request.ids ?? [], progress: request.progress ?? false, connection: connection)
        case .status: connection.send(WireProtocol.encode(Reply(status: status())))
        case .skip: control(connection, scheduler.skip(now: now), now: now)
        case .pause:
            setPausedMarker(true)
            control(connection, scheduler.pause(now: now), now: now, event: .paused)
        case .resume:
            setPausedMarker(false)
            control(connection, resumeAwaiting(now: now) + scheduler.resume(now: now), now: now, event: .resumed)
        case .stop:
            for id in mixed.keys.sorted() { endMixed(id, Outcome(.cancelled, reason: "stopped"), now: now) }
            control(connection, scheduler.stop(now: now), now: now)
        case .clear: control(connection, scheduler.clear(now: now), now: now)
        case .cancel:
            if let tag = request.tag {
                for (id, stream) in mixed where stream.item.tag == tag { endMixed(id, Outcome(.cancelled, reason: "cancelled"), now: now) }
                control(connection, scheduler.cancel(tag: tag, now: now), now: now)
            } else if let ids = request.ids, !ids.isEmpty {
                for id in ids where mixed[id] != nil { endMixed(id, Outcome(.cancelled, reason: "cancelled"), now: now) }
                let (effects, unknown) = scheduler.cancel(ids: ids.filter { mixed[$0] == nil }, now: now)
                apply(effects, now: now)
                connection.send(WireProtocol.encode(Reply(unknown: unknown.filter { mixed[$0] == nil })))
            } else {
                reject(connection, "cancel needs ids or a tag")
            }
        case .events:
            connection.subscribed = true
            connection.send(WireProtocol.encode(Reply()))
        case .quiet:
            setQuiet(request, from: connection, now: now)
        }
    }

    /// `announce quiet on|off|until`: takes effect for the next item that starts; the one
    /// playing now goes on. Saved in the runtime directory so a restart keeps it.
    private func setQuiet(_ request: Request, from connection: Connection, now: Double) {
        let setting: QuietSetting
        switch request.state {
        case nil: return reject(connection, "quiet needs a state: on, off or until")
        case .on?: setting = .on
        case .off?: setting = .off(since: now)
        case .until?:
            guard let until = request.until, until.isFinite else { return reject(connection, "quiet until needs an \"until\" time") }
            guard until > now else { return reject(connection, "quiet until: the time has already passed") }
            guard until <= now + TimeSpan.longest.seconds else { return reject(connection, "quiet until: the time is too far ahead") }
            setting = .until(until)
        }
        // Kept across restarts or not taken at all: a switch that a restart would forget is refused.
        do { try runtime.saveQuietSetting(setting) } catch {
            logger.error("\(error.description)")
            return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "quiet mode not changed: \(error.description)")))
        }
        quiet.setting = setting
        let state = quiet.state(at: now)
        logger.info("quiet \(setting.kind.rawValue): quiet mode is \(state.quiet ? "on" : "off") (\(state.reason))")
        emit(Event(.quiet, time: now, reason: state.reason, quiet: state.quiet, state: setting.kind, until: state.until))
        connection.send(WireProtocol.encode(Reply()))
    }

    func reject(_ connection: Connection, _ message: String) {
        connection.sendAndClose(WireProtocol.encode(Reply.failure(64, message)))
    }

    private func control(_ connection: Connection, _ effects: [SchedulerEffect], now: Double, event: EventKind? = nil) {
        apply(effects, now: now)
        if let event { emit(Event(event, time: now)) }
        connection.send(WireProtocol.encode(Reply()))
    }

    private func enqueue(_ request: Request, from connection: Connection, now: Double) {
        guard let requests = request.items, !requests.isEmpty else { return reject(connection, "play needs at least one item") }
        guard requests.count <= 1000 else { return reject(connection, "at most 1000 items per request") }
        var items: [(QueueItem, Bool)] = []
        var passed: Set<String> = []  // devices checked for this request: each once, not per item
        for (index, itemRequest) in requests.enumerated() {
            if let problem = Self.problem(with: itemRequest) { return reject(connection, "items[\(index)]: \(problem)") }
            // A missing device is the daemon's own: it must not come twice either.
            let devices = itemRequest.clip.devices(default: configuration.device)
            if Set(devices).count != devices.count {
                return reject(connection, "items[\(index)]: device \(configuration.device) (the daemon's) is given twice")
            }
            // A device that cannot play fails the request now: nothing queued, nothing preempted.
            if let failure = deviceFailure(devices, environment: itemRequest.clip.environment, passed: &passed) {
                return connection.sendAndClose(WireProtocol.encode(Reply.failure(failure.exitCode, failure.description)))
            }
            let eligibleAt = itemRequest.at ?? itemRequest.delay.map { now + $0 }
            let item = QueueItem(
                id: newID(), clip: itemRequest.clip, priority: itemRequest.priority ?? .normal,
                interrupts: itemRequest.interrupts ?? true, onInterrupt: itemRequest.onInterrupt ?? .resume,
                dropAfter: itemRequest.dropAfter ?? 0.8, tag: itemRequest.tag, arrival: now,
                eligibleAt: eligibleAt.flatMap { $0 > now ? $0 : nil }, expireAfter: itemRequest.expire,
                session: itemRequest.session, duckLevel: itemRequest.duckLevel, ifBusy: itemRequest.ifBusy)
            // `play --tag T --replace a b` replaces older T items, not its own first file.
            let replaces = (itemRequest.replace ?? false) && !items.contains { $0.0.tag == item.tag && $0.1 }
            items.append((item, replaces))
        }
        // All or nothing across a crash too: uncommitted until every item is spooled.
        do { try spool.beginRequest(items.map(\.0.id)) } catch {
            logger.error("\(error.description)")
            return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the request: \(error.description)")))
        }
        defer { spool.endRequest() }
        var ids: [String] = []
        for (item, replace) in items {
            if replace, let tag = item.tag {
                // Playing mixing streams with the tag are replaced too (the scheduler has the queue's).
                for (id, stream) in mixed where stream.item.tag == tag && !ids.contains(id) {
                    endMixed(id, Outcome(.replaced, reason: "replaced by \(item.id)"), now: now)
                }
            }
            if item.audioSession.lane == .mixed {
                // Mixable: never queued, it starts now over whatever plays.
                var item = item
                item.sequence = scheduler.nextSequence
                do {
                    try spool.save(item)
                } catch {
                    logger.error("\(error.description)")
                    apply(scheduler.cancel(ids: ids, now: now).effects, now: now)
                    for id in ids where mixed[id] != nil { endMixed(id, Outcome(.cancelled, reason: "cancelled"), now: now) }
                    return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the item: \(error.description)")))
                }
                ids.append(item.id)
                emit(Event(.queued, time: now, id: item.id, path: item.clip.path, priority: item.priority))
                startMixed(item, alert: false, now: now)
                continue
            }
            var effects = scheduler.enqueue(item, replace: replace, now: now)
            // Spooled before it is acknowledged; if that fails, it was never accepted.
            if case .persist(let spooled)? = effects.first {
                effects.removeFirst()
                do {
                    try spool.save(spooled)
                } catch {
                    logger.error("\(error.description)")
                    // None of the request is accepted: its items spooled so far go too.
                    apply(effects + scheduler.cancel(ids: ids + [item.id], now: now).effects, now: now)
                    return connection.send(WireProtocol.encode(Reply.failure(error.exitCode, "cannot spool the item: \(error.description)")))
                }
            }
            ids.append(item.id)
            emit(Event(.queued, time: now, id: item.id, path: item.clip.path, priority: item.priority))
            apply(effects, now: now)
        }
        // Its client left meanwhile (it gave up on a daemon frozen mid-request, saying "not played"): undone.
        if connection.peerHungUp {
            logger.warning("a play request whose client left before it was accepted is undone")
            for id in ids where mixed[id] != nil { endMixed(id, Outcome(.cancelled, reason: "cancelled"), now: now) }
            return apply(scheduler.cancel(ids: ids, now: now).effects, now: now)
        }
        spool.commitRequest()  // right before the acknowledgement (the fsync comes after it)
        // Main-lane items wait for `announce resume`: the client says so.
        let waitsForResume = scheduler.isPaused && items.contains { $0.0.audioSession.lane == .main }
        connection.send(WireProtocol.encode(Reply(ids: ids, pausedSince: waitsForResume ? runtime.pausedSince ?? now : nil)))
        if request.wait ?? false { subscribe(connection, to: ids, progress: request.progress ?? false) }
    }

    /// The first of `devices` that cannot be opened here, as its error. Devices that have played
    /// in this daemon (a later failure is waited for or reported like one mid-play) and those
    /// lost mid-play (waited for) are not probed again: the check costs a connection to a sound server.
    /// A `file:` device is checked every time: that costs a stat, and its directory may have gone.
    /// Within one request each device is checked once (`passed`), not once per item.
    func deviceFailure(_ devices: [String], environment: [String: String]?, passed: inout Set<String>) -> AnnounceError? {
        for device in devices where !passed.contains(device) && (DeviceProbe.fileArgument(device) != nil
            || (!playedDevices.contains(device) && !lostDevices.contains(device))) {
            do { try probeDevice(device, environment) } catch { return error }
            passed.insert(device)
        }
        return nil
    }

    var pendingIDs: Set<String> {
        Set(([scheduler.playing].compactMap { $0 } + scheduler.ready + scheduler.scheduled).map(\.id))
            .union(mixed.keys)
            .union(heldFinishes.values.flatMap { $0.compactMap(\.id) })
    }

    /// Something is playing (or being stopped) on some device.
    var isPlaying: Bool { scheduler.playing != nil || mixed.values.contains(where: \.playing) }

    // MARK: effects and reports

    func apply(_ effects: [SchedulerEffect], now: Double) {
        // A worklist rather than recursion: an item silenced by quiet mode brings the
        // scheduler's next effects, which may silence the next item, and so on.
        var effects = effects
        var next = 0
        while next < effects.count {
            let effect = effects[next]
            next += 1
            switch effect {
            case .persist(let item):
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .play(let item) where item.sessionCategory.silencedByQuietMode && quiet.isQuiet(at: now):
                // Never reaches the player: it ends `silenced` and the next item is offered.
                effects += scheduler.playbackEnded(id: item.id, heardFrames: 0, totalFrames: nil,
                                                   end: .silenced(reason: "quiet mode"), now: now)
            case .play(let item):
                applyDucking(policy.setSuspended(item.id, false))
                if let stream = policy[item.id], !stream.isPlaying {
                    // Left paused by a --no-notify-others session (or still interrupted): it waits
                    // at the head of the queue for `announce resume`.
                    effects += scheduler.playbackEnded(id: item.id, heardFrames: 0, totalFrames: nil,
                                                       end: .held(Self.resumeHold), now: now)
                    continue
                }
                if policy[item.id] == nil {
                    effects += activate(item, preempting: preemptedFor.removeValue(forKey: item.id), now: now)
                }
                deviceCloseAt = nil
                playingTotal = item.totalFrames
                playingFrames = 0
                player.play(item, devices: item.clip.devices(default: configuration.device), gain: startingGain(item.id),
                            watched: isProgressWatched(item.id))
                // Started items never expire, also after a crash; saved after the play began.
                do { try spool.save(item) } catch { logger.error("\(error.description)") }
            case .stopPlayback(let id, _):
                player.stop(id)
            case .interrupted(let item, let reason):
                switch reason {
                case .preempted(let by): preemptedFor[by] = item.id
                case .held, .paused:
                    // Silent until it plays again: it ducks no one meanwhile.
                    applyDucking(policy.setSuspended(item.id, true))
                default: break
                }
                // Interruptions the daemon announced itself (sessions, the device) are not repeated.
                if interruptedIDs.insert(item.id).inserted {
                    emit(Event(.interruptionBegan, time: now, id: item.id, path: item.clip.path, priority: item.priority,
                               reason: Self.describe(reason), heard: seconds(item.heardFrames, of: item.id)))
                }
            case .finish(let item, let outcome):
                effects += deactivate(item.id, now: now)
                preemptedFor = preemptedFor.filter { $0.value != item.id && $0.key != item.id }
                let played = details.removeValue(forKey: item.id)
                lastMilestone[item.id] = nil
                interruptedIDs.remove(item.id)
                let event = Event(.finished, time: now, id: item.id, path: item.clip.path, priority: item.priority,
                                  reason: outcome.reason, heard: seconds(item.heardFrames, of: item.id),
                                  duration: seconds(item.totalFrames, of: item.id), outcome: outcome, device: played?.device,
                                  format: played?.format, frames: played?.frames, warning: played?.warning)
                rates[item.id] = nil
                do { try spool.finish(item.id, event: event) } catch { logger.error("\(error.description)") }
                logger.info("\(item.id) \(item.clip.path): \(outcome.kind.rawValue)\(outcome.reason.map { " (\($0))" } ?? "")")
                // Held until its own device closes (a multi-route play: the first such device).
                if let device = played?.device.components(separatedBy: ", ").first(where: {
                    $0 != configuration.device && openDevices.contains($0) }) {
                    heldFinishes[device, default: []].append(event)
                } else {
                    emit(event)
                }
            }
        }
        if let playing = scheduler.playing {
            // The device stays open for the next item, so nothing is left to wait for.
            for event in heldFinishes.removeValue(forKey: playing.clip.device ?? configuration.device) ?? [] { emit(event) }
        }
        scheduleDeviceClose(now: now)
    }

    func seconds(_ frames: Int64?, of id: String) -> Double? {
        guard let frames, let rate = rates[id], rate > 0 else { return nil }
        return (Double(frames) / Double(rate) * 1000).rounded() / 1000
    }

    /// The config file as last read: a request rereads it when this changes (one stat).
    private var configStamp: FileStamp?

    private func rereadConfigurationIfChanged() {
        guard let path = configuration.configPath else { return }
        let stamp = FileStamp(path)
        guard stamp != configStamp else { return }
        configStamp = stamp
        let (reread, warnings) = UserConfiguration.reload(path: path)
        for warning in warnings { logger.warning("\(warning)") }
        guard let user = reread else { return }
        configuration.quietHours = user.quietHours
        configuration.duckLevel = user.duckLevel
        quiet.hours = user.quietHours
        let hours = user.quietHours.map(\.description).joined(separator: ", ")
        logger.info("\(path) reread: quiet hours \(hours.isEmpty ? "none" : hours), duck level \(user.duckLevel) dB")
    }

    /// Keeps daemon.log bounded; checked at start and as each item ends.
    func rotateLog() {
        if runtime.rotateLogIfNeeded() { logger.info("the log goes on from \(runtime.logPath).1") }
    }

    /// A client shows this item's progress. (An `events` listener's 25/50/75% marks need no more
    /// than the unwatched reports: eight per clip at least.)
    func isProgressWatched(_ id: String) -> Bool {
        connections.values.contains { $0.wantsProgress && $0.waiting.contains(id) }
    }

    private func drainMailbox() {
        for report in mailbox.take() { handle(report) }
    }

    private func handle(_ report: PlayerReport) {
        let now = clock()
        switch report {
        case .started(let id, let device, let format, let buffering, let rate, let total):
            rates[id] = rate
            playedDevices.insert(device)
            if openDevices.insert(device).inserted {
                logger.info("device '\(device)' opened as \(format), \(buffering)")
                emit(Event(.deviceOpened, time: now, device: device, format: format))
            }
            guard let item = item(id), startedPlays.insert(id).inserted else { return }
            if scheduler.playing?.id == id { playingTotal = total }
            // The device works: whatever waited for it is over.
            deviceRetryDelay = Self.firstRetryDelay
            if lostDevices.remove(device) != nil {
                logger.info("device '\(device)' is back")
                emit(Event(.routeChange, time: now, reason: "new-device-available", device: device, format: format))
            }
            if interruptedIDs.contains(id), policy[id]?.isInterrupted != true {
                interruptedIDs.remove(id)
                emit(Event(.interruptionEnded, time: now, id: id, path: item.clip.path, priority: item.priority, shouldResume: true))
            }
            logger.info("\(id) \(item.clip.path): started on \(device) as \(format)")
            emit(Event(.started, time: now, id: id, path: item.clip.path, priority: item.priority,
                       heard: seconds(item.heardFrames, of: id), duration: seconds(total, of: id), device: device, format: format))
        case .progress(let id, let frames, _, let counted):
            // An estimated length, counted exactly after the start.
            if let counted {
                if mixed[id] != nil { mixed[id]?.item.totalFrames = counted }
                if scheduler.playing?.id == id { playingTotal = counted }
            }
            // Ten reports a second per stream: nothing is built unless someone listens.
            let heardBefore: Int64, total: Int64?
            if let stream = mixed[id] {
                mixed[id]?.frames = frames
                (heardBefore, total) = (stream.item.heardFrames, stream.item.totalFrames)
            } else if let playing = scheduler.playing, playing.id == id {
                playingFrames = frames
                (heardBefore, total) = (playing.heardFrames, playingTotal)
            } else {
                return
            }
            let heard = heardBefore + frames
            var milestone = 0
            if let total, total > 0 {
                let percent = Int(heard * 100 / total)
                milestone = [75, 50, 25].first { percent >= $0 } ?? 0
                if milestone > lastMilestone[id, default: 0] { lastMilestone[id] = milestone } else { milestone = 0 }
            }
            let watchers = connections.values.filter { $0.wantsProgress && $0.waiting.contains(id) }
            let subscribers = milestone > 0 ? connections.values.filter(\.subscribed) : []
            if watchers.isEmpty && subscribers.isEmpty { return }
            var event = Event(.progress, time: now, id: id, heard: seconds(heard, of: id), duration: seconds(total, of: id))
            if !watchers.isEmpty {
                let tick = WireProtocol.encode(event)
                for connection in watchers { connection.send(tick) }
            }
            if !subscribers.isEmpty {
                event.percent = milestone
                let line = WireProtocol.encode(event)
                for connection in subscribers { connection.send(line) }
            }
        case .ended(let id, let heard, let total, let rate, var end, let played):
            rotateLog()
            startedPlays.remove(id)
            if let rate { rates[id] = rate }
            details[id] = played
            if case .failed(_, let message) = end { logger.warning("\(message)") }
            if mixed[id] != nil {
                return mixedEnded(id, heard: heard, total: total, end: end, details: played, now: now)
            }
            playingFrames = heard
            if case .failed = end, let item = scheduler.playing, item.id == id,
               let hold = deviceTrouble(played, item: item, now: now) {
                end = .held(hold)  // back to the head of the queue; the device is tried again
            }
            apply(scheduler.playbackEnded(id: id, heardFrames: heard, totalFrames: total, end: end, now: now), now: now)
        case .devicesClosed(let devices):
            for device in devices where openDevices.remove(device) != nil {
                emit(Event(.deviceClosed, time: now, device: device))
                for event in heldFinishes.removeValue(forKey: device) ?? [] { emit(event) }
            }
        }
    }

    /// To every `events` subscriber, and to the clients waiting on the event's item.
    func emit(_ event: Event) {
        let line = WireProtocol.encode(event)
        for connection in connections.values {
            let waits = event.id.map { connection.waiting.contains($0) } ?? false
            guard connection.subscribed || (waits && event.event != .queued) else { continue }
            connection.send(line)
            if waits && event.event == .finished { connection.waiting.remove(event.id!) }
        }
    }

    private func status() -> DaemonStatus {
        func describe(_ item: QueueItem, _ state: ItemStatus.State) -> ItemStatus {
            var status = ItemStatus(id: item.id, state: state, path: item.clip.path, priority: item.priority, tag: item.tag,
                                    device: item.clip.device, heard: item.heardFrames > 0 ? seconds(item.heardFrames, of: item.id) : nil,
                                    eligibleAt: item.eligibleAt, expiresAt: item.started ? nil : item.expiresAt)
            if item.audioSession != .default { status.session = item.audioSession.description }
            if policy[item.id]?.ducked == true { status.ducked = true }
            return status
        }
        var playing = scheduler.playing.map { describe($0, .playing) }
        if let item = scheduler.playing {
            playing?.heard = seconds(item.heardFrames + playingFrames, of: item.id)
            playing?.duration = seconds(playingTotal, of: item.id)
        }
        var status = DaemonStatus(pid: getpid(), device: configuration.device, deviceOpen: !openDevices.isEmpty,
                            paused: scheduler.isPaused, playing: playing,
                            queued: scheduler.ready.map { describe($0, $0.interrupted ? .interrupted : .queued) },
                            scheduled: scheduler.scheduled.map { describe($0, .scheduled) },
                            quiet: quiet.state(at: clock()))
        let streams = mixed.values.sorted { ($0.item.arrival, $0.item.id) < ($1.item.arrival, $1.item.id) }.map { stream in
            var entry = describe(stream.item, stream.playing ? .playing : .interrupted)
            entry.heard = seconds(stream.item.heardFrames + stream.frames, of: stream.item.id)
            entry.duration = seconds(stream.item.totalFrames, of: stream.item.id)
            return entry
        }
        status.mixing = streams.isEmpty ? nil : streams
        status.holds = scheduler.holds.isEmpty ? nil : scheduler.holds.sorted()
        if scheduler.isPaused { status.pausedSince = runtime.pausedSince }
        status.idleExit = configuration.idleExit
        status.autoStarted = configuration.readyFD != nil ? true : nil  // clients start daemons with a ready fd
        return status
    }

    static func describe(_ reason: StopReason) -> String {
        switch reason {
        case .preempted(let by): "preempted by \(by)"
        case .paused: "paused"
        case .held(let why): why
        case .skipped: "skipped"
        case .cancelled: "cancelled"
        case .replaced(let by): "replaced by \(by)"
        case .stopped: "stopped"
        }
    }
}

/// The player's reports on their way to the control thread, which polls `wakeup`.
final class Mailbox: Sendable {
    let wakeup: EventFD
    private let reports = Mutex<[PlayerReport]>([])

    init() throws(AnnounceError) { wakeup = try EventFD() }

    func post(_ report: PlayerReport) {
        reports.withLock { $0.append(report) }
        wakeup.signal()
    }

    func take() -> [PlayerReport] {
        wakeup.drain()
        return reports.withLock { reports in
            defer { reports.removeAll() }
            return reports
        }
    }
}
