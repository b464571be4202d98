import AnnounceClient
import AnnounceDaemon
import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import AnnounceZones
import ArgumentParser
import Logging

#if canImport(Glibc)
    import Glibc
#endif

struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "daemon",
        abstract: "Run the queue owner in the foreground (systemd user unit, or debugging).",
        discussion: """
            `announce play` starts a daemon by itself when none answers; that one exits after \
            \(DaemonClient.autoStartIdleExit) with nothing queued and no client connected. Run this \
            one to keep it up (see contrib/systemd/announce.service). SIGTERM, SIGINT or SIGHUP \
            stop it cleanly: queued items, and the playing one at the point it was heard to, \
            stay in the spool and play when a daemon next starts. Exits 69 when another daemon \
            already owns the runtime directory. When one does, an auto-started one (it would exit \
            when idle) is taken over: it is stopped as above and this one goes on with its queue; \
            a permanent one is left alone, with `announce: already running (pid N)` and exit 0.

            The config file ($XDG_CONFIG_HOME/announce/config, else ~/.config/announce/config) \
            is read at start: `device`, `loudness`, `duck-level`, `quiet-hours`, `quiet-level`, \
            `wake-up`, `keep-open` and the rest (docs/USAGE.md); it is read again whenever it changes, and \
            what changed applies from the next item (a new device, from the next start). Problems in it are logged as warnings, \
            never fatal.

            --system runs the machine's one queue for root's cron jobs, system services and every \
            member of group announce (contrib/systemd/announce-system.service; DESIGN §8): its \
            directory is /run/announce ($ANNOUNCE_SYSTEM_DIR), its socket group announce, mode 0660, \
            its config /etc/announce/config ($ANNOUNCE_SYSTEM_CONFIG, with a [system] section); no \
            user's config is read. Started as root it makes the directory, then becomes user \
            announce (--run-as) with groups announce and audio before it reads any request.
            """)

    @Option(
        name: .shortAndLong,
        help: "ALSA PCM for items without --device (default: the config file's `device`, else `default`).",
        completion: deviceCompletion)
    var device: DeviceName?

    @Option(duration: "idle-exit", help: "Exit after this long with nothing queued and no client connected.")
    var idleExit: TimeSpan?

    @Flag(long: "quiet", short: "q", help: "Log errors only (ANNOUNCE_LOG overrides).")
    var quiet = false

    @Option(help: .hidden)
    var readyFd: Int32?

    @Flag(help: "Run the system queue: one daemon for the whole machine (also `announce --system daemon`).")
    var system = false

    @Option(
        long: "run-as",
        help: "With --system, started as root: the user to become (default: announce).", valueName: "user"
    )
    var runAs: String?

    func validate() throws {
        if runAs != nil && !(system || GlobalFlags.system == true) { throw ValidationError("--run-as needs --system") }
        if (system || GlobalFlags.system == true) && readyFd != nil {
            throw ValidationError("the system queue is never started by a client")
        }
    }

    func run() throws {
        let quiet = quiet
        _ = LogOutput.descriptor  // before any thread can send stderr elsewhere
        LoggingSystem.bootstrap { _ in DaemonLogHandler(quiet: quiet) }
        let logger = Logger(label: "announce-daemon")
        ALSALogBridge.install(logger)
        do {
            if system || GlobalFlags.system == true { return try runSystem(logger: logger) }
            let runtime = try RuntimeDirectory.prepare()
            var (configuration, user) = configured(by: UserConfiguration.defaultPath(), logger: logger)
            configuration.idleExit = idleExit?.seconds
            configuration.ready = readyFd.map { ReadyPipe(fd: $0) }
            // A permanent daemon (the user unit's) is offered to the system queue as its listener.
            if idleExit == nil && readyFd == nil {
                configuration.systemQueueDirectory = try? RuntimeDirectory.systemPath()
            }
            // Started by a person or systemd: take over from an auto-started daemon, holding the
            // clients' spawn lock throughout, so that a waiting client whose daemon stops cannot
            // start another one before this one listens.
            if readyFd == nil { configuration.spawnLock = try? runtime.lockSpawn() }
            if readyFd == nil, let running = try runningDaemon(runtime) {
                // A daemon someone started on purpose, even with --idle-exit, is left alone.
                guard running.autoStarted == true, takeOver(running.pid, runtime: runtime) else {
                    return printError("already running (pid \(running.pid))")
                }
                logger.info("took over from the auto-started daemon (pid \(running.pid))")
            }
            // A host in zones stays up: a play may come from another host at any time.
            if user.mqtt != nil {
                if configuration.idleExit != nil {
                    logger.info("[mqtt] is configured: this daemon does not exit when idle")
                }
                configuration.idleExit = nil
                addZones(user, to: &configuration, runtime: runtime, logger: logger)
            }
            let daemon = Daemon(runtime: runtime, configuration: configuration, logger: logger)
            if try !daemon.run(), readyFd == nil {
                // Another one won the race to the lock meanwhile.
                let pid = try runningDaemon(runtime)?.pid
                return printError("already running" + (pid.map { " (pid \($0))" } ?? ""))
            }
        } catch {
            throw reportedExit(error)
        }
    }
}

extension DaemonCommand {
    /// `--system` (DESIGN §8): the directory made and given away as root, root dropped for good,
    /// then the same daemon as a user's, with `SystemAccess` deciding what each caller may do.
    func runSystem(logger: Logger) throws(AnnounceError) {
        let path = try RuntimeDirectory.systemPath()
        let configPath = try RuntimeDirectory.systemConfigPath()
        guard let group = Accounts.group(named: SystemSettings.group) else {
            throw .unavailable(
                "group '\(SystemSettings.group)' does not exist: the package's sysusers.d file makes it (systemd-sysusers), or groupadd --system \(SystemSettings.group)"
            )
        }
        let runtime: RuntimeDirectory
        if getuid() == 0 {
            let name = runAs ?? SystemSettings.user
            guard let account = Accounts.user(named: name) else {
                throw .unavailable(
                    "user '\(name)' does not exist: the package's sysusers.d file makes it (systemd-sysusers), or useradd --system \(name); --run-as names another"
                )
            }
            guard account.uid != 0 else { throw .usage("--run-as \(name): the system queue never runs as root") }
            runtime = try RuntimeDirectory.prepareSystem(path, owner: account.uid, group: group)
            let audio = Accounts.group(named: "audio").map { [$0] } ?? []
            try Accounts.become(account, primary: group, groups: Array(Set([group, account.gid] + audio)))
        } else {
            guard runAs == nil else {
                throw .usage("--run-as needs root: this daemon already runs as \(Accounts.name(of: getuid()))")
            }
            runtime = try RuntimeDirectory.prepareSystem(path, owner: getuid(), group: group)
        }
        // Nothing of whoever started it: no session bus, no sound server of theirs, caches in its own directory.
        for name in [
            "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "PULSE_SERVER", "PULSE_RUNTIME_PATH", "PULSE_COOKIE",
            "PULSE_CLIENTCONFIG", "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_REMOTE"
        ] { unsetenv(name) }
        setenv("HOME", runtime.path, 1)
        setenv("XDG_CACHE_HOME", runtime.path + "/cache", 1)
        umask(0o077)
        raiseDescriptorLimit()
        if let running = try runningDaemon(runtime) { return printError("already running (pid \(running.pid))") }
        var (configuration, user) = configured(by: configPath, logger: logger)
        if let name = user.system.controlGroup, Accounts.group(named: name) == nil {
            logger.warning(
                "\(configPath): [system] control-group '\(name)' does not exist; only root controls the queue")
        }
        configuration.system = user.system
        addZones(user, to: &configuration, runtime: runtime, logger: logger)
        logger.info("the system queue, as \(Accounts.name(of: getuid())) (uid \(getuid())); config \(configPath)")
        if try !Daemon(runtime: runtime, configuration: configuration, logger: logger).run() {
            let pid = try runningDaemon(runtime)?.pid
            printError("already running" + (pid.map { " (pid \($0))" } ?? ""))
        }
    }

    /// How long a stop may take: its longest own wait is 2 s (the plays' last reports).
    static let stopSeconds = 5.0

    /// The daemon's configuration from the config file at `path` (its problems logged as
    /// warnings), and the file's settings: the one reading for a user's daemon and the system's.
    private func configured(by path: String?, logger: Logger) -> (Daemon.Configuration, UserConfiguration) {
        let stamp = path.flatMap(FileStamp.init)  // before reading: an edit meanwhile is seen
        let (user, warnings) = UserConfiguration.load(path: path)
        for warning in warnings { logger.warning("\(warning)") }
        var configuration = Daemon.Configuration(
            device: device ?? user.device ?? UserConfiguration.defaultDevice,
            quietHours: user.quietHours, duckLevel: user.duckLevel)
        configuration.silence = user.silence
        configuration.loudness = user.loudness
        configuration.quietLevel = user.quietLevel
        configuration.wakeUp = user.wakeUp
        configuration.keepOpen = user.keepOpen
        configuration.configPath = path
        configuration.configStamp = stamp
        configuration.speechCacheBytes = user.speechCacheBytes
        configuration.interruptingRoles = user.interruptingRoles
        configuration.stopSeconds = Self.stopSeconds  // the process's, not the file's
        return (configuration, user)
    }

    /// With `[mqtt]`, zones' bridge among the daemon's services.
    private func addZones(
        _ user: UserConfiguration, to configuration: inout Daemon.Configuration, runtime: RuntimeDirectory,
        logger: Logger
    ) {
        guard let mqtt = user.mqtt else { return }
        let (engine, voice) = (user.speechEngine, user.speechVoice)
        configuration.services.append(
            (
                "zones",
                {
                    ZoneBridge.start(mqtt, speechEngine: engine, speechVoice: voice, runtime: runtime, logger: logger)
                }
            ))
    }

    /// Every caller may hand over files: the soft limit on descriptors goes up to the hard one.
    private func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max
        else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// The daemon answering on `runtime`'s socket, if one does.
private func runningDaemon(_ runtime: RuntimeDirectory) throws(AnnounceError) -> DaemonStatus? {
    guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime) else { return nil }
    return try client.call(.status).status
}

/// Stops daemon `pid` (SIGTERM: it keeps its queue in the spool) and waits up to 10 s for it
/// to give up the runtime directory's lock; false if it still holds it.
private func takeOver(_ pid: Int32, runtime: RuntimeDirectory) -> Bool {
    let lock = open(runtime.daemonLockPath, O_RDWR | O_CLOEXEC)
    guard lock >= 0, kill(pid, SIGTERM) == 0 else { return false }
    defer { close(lock) }
    for _ in 0..<1000 {
        if flock(lock, LOCK_EX | LOCK_NB) == 0 {
            flock(lock, LOCK_UN)
            return true
        }
        usleep(10_000)
    }
    return false
}

/// Timestamped lines on stderr (the log file when auto-started; through LogOutput), one per
/// message: names in a message are escaped (escapedForLog), so a file name cannot forge a line.
struct DaemonLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(quiet: Bool) {
        logLevel = configuredLogLevel(otherwise: quiet ? .error : .info)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var fields = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &fields)
        var stamp = [CChar](repeating: 0, count: 32)
        strftime(&stamp, stamp.count, "%Y-%m-%dT%H:%M:%S", &fields)
        let millis = Int(now.tv_nsec / 1_000_000)
        let fraction = (millis < 10 ? "00" : millis < 100 ? "0" : "") + String(millis)
        LogOutput.write(
            "\(String(decoding: stamp.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)).\(fraction)Z [\(getpid())] \(event.level): \(escapedForLog(event.message.description))\n"
        )
    }
}
