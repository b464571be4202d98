import AnnounceModel
import AnnounceSystem
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to the user's daemon: send requests, read replies and events.
public final class DaemonClient {
    public let runtime: RuntimeDirectory
    /// The machine's daemon (DESIGN §8): never started by a client.
    public let isSystem: Bool
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    /// How long an auto-started daemon lingers with nothing to do.
    public static let autoStartIdleExit = "30s"

    /// How long a client waits for the daemon to take its connection or answer a request
    /// (`ANNOUNCE_TIMEOUT` seconds, default 30: a daemon busy spooling a thousand items still
    /// answers). A daemon found stopped (SIGSTOP, Ctrl-Z) fails sooner, at the next check.
    /// A value that is no duration above 0 (`abc`, `0`, `-1`) is a usage error at the first
    /// connection rather than a silent 30.
    static let answerTimeoutSetting: Result<Double, AnnounceError> = {
        guard let text = getenv("ANNOUNCE_TIMEOUT").map({ String(cString: $0) }), !text.isEmpty else {
            return .success(defaultAnswerTimeout)
        }
        do {
            let span = try TimeSpan(validating: text)
            guard span.seconds > 0 else { return .failure(.usage("ANNOUNCE_TIMEOUT=\(text): must be more than 0 s")) }
            return .success(span.seconds)
        } catch let error as TimeTextError {
            return .failure(.usage("ANNOUNCE_TIMEOUT=\(text): \(error.description)"))
        } catch {
            return .failure(.usage("ANNOUNCE_TIMEOUT=\(text): not a duration (\(TimeSpan.example))"))
        }
    }()
    public static var answerTimeout: Double { (try? answerTimeoutSetting.get()) ?? defaultAnswerTimeout }
    static let defaultAnswerTimeout = 30.0
    /// How often a client waiting on the daemon checks that it is not stopped.
    static let checkInterval = 1.0

    private init(runtime: RuntimeDirectory, fd: Int32, isSystem: Bool = false) {
        self.runtime = runtime
        self.fd = fd
        self.isSystem = isSystem
    }

    deinit { close(fd) }

    /// Connects to the daemon; when none answers, starts one if `autoStart`
    /// (else returns nil). Fifty callers at once start exactly one: they queue
    /// on a lock, and the first one's daemon answers the rest.
    /// The system daemon (`RuntimeDirectory.clientTarget`) is never started: with `autoStart`
    /// one that does not answer is an error (69); a caller it does not let in gets 77.
    /// `reconnecting`: the daemon was there and went away; the system one is waited for.
    public static func connect(autoStart: Bool, runtime: RuntimeDirectory? = nil, reconnecting: Bool = false)
        throws(AnnounceError) -> DaemonClient?
    {
        let target = try RuntimeDirectory.clientTarget()
        let runtime = if let runtime { runtime } else { try RuntimeDirectory.forClient(target) }
        // Its path, not the socket's presence now: a client reconnecting while the system
        // daemon restarts must wait for it, never start one of its own there.
        let system = try runtime.path == RuntimeDirectory.systemPath()
        if let fd = try tryConnect(runtime, system: system) {
            return DaemonClient(runtime: runtime, fd: fd, isSystem: system)
        }
        guard autoStart else { return nil }
        if system {
            // Its service restarts it: a client that was connected waits for it (`answerTimeout`).
            if reconnecting {
                let started = SystemClock.monotonic()
                while SystemClock.monotonic() - started < answerTimeout {
                    usleep(100_000)
                    if let fd = try tryConnect(runtime, system: true) {
                        return DaemonClient(runtime: runtime, fd: fd, isSystem: true)
                    }
                }
            }
            throw .unavailable(
                "the system queue does not answer at \(runtime.socketPath): is its daemon running? (systemctl start announce-system)"
            )
        }
        return DaemonClient(runtime: runtime, fd: try startDaemon(runtime))
    }

    /// For a command that reads or changes the queue (status, cancel, skip, pause...): the
    /// daemon that answers; else, when the spool still holds items (a daemon died with them
    /// queued), one started as `play` would, which takes them back so the command acts on them;
    /// else nil: no daemon, and nothing queued.
    public static func connectToQueue(runtime: RuntimeDirectory) throws(AnnounceError) -> DaemonClient? {
        if let client = try connect(autoStart: false, runtime: runtime) { return client }
        return runtime.holdsSpooledItems ? try connect(autoStart: true, runtime: runtime) : nil
    }

    /// A connection, or nil when no daemon listens. A daemon that does not take it (stopped,
    /// or wedged with its backlog full) is an error once `answerTimeout` has passed.
    private static func tryConnect(_ runtime: RuntimeDirectory, system: Bool = false) throws(AnnounceError) -> Int32? {
        _ = try answerTimeoutSetting.get()
        let started = SystemClock.monotonic()
        while true {
            let fd = announce_unix_connect(runtime.socketPath, Int32(max(1, min(checkInterval, answerTimeout) * 1000)))
            if fd >= 0 { return fd }
            // The socket's group is the system queue's: whoever is not in it cannot connect.
            if system && (fd == -EACCES || fd == -EPERM) {
                throw .notPermitted(Caller.outsider(Accounts.name(of: getuid())))
            }
            guard fd == -EAGAIN else { return nil }
            try checkAnswering(runtime, waited: SystemClock.monotonic() - started, limit: answerTimeout)
        }
    }

    /// Throws when the daemon is stopped, or has kept the client waiting past `limit`.
    private static func checkAnswering(_ runtime: RuntimeDirectory, waited: Double, limit: Double?)
        throws(AnnounceError)
    {
        let pid = readWholeFile(runtime.daemonLockPath, limit: 64)
            .flatMap { pid_t(String(decoding: $0.filter { $0 > 32 }, as: UTF8.self)) }
        let daemon = pid.map { "the daemon (pid \($0))" } ?? "the daemon"
        if let pid, isStopped(pid) {
            throw .unavailable(
                "\(daemon) does not answer on \(runtime.socketPath): it is stopped (kill -CONT \(pid) lets it go on)")
        }
        if let limit, waited >= limit {
            throw .unavailable(
                "\(daemon) does not answer on \(runtime.socketPath): nothing for \(Int(waited.rounded())) s (ANNOUNCE_TIMEOUT)"
            )
        }
    }

    /// True when the process is stopped by a signal or a tracer (/proc/PID/stat state T or t).
    private static func isStopped(_ pid: pid_t) -> Bool {
        guard let stat = readWholeFile("/proc/\(pid)/stat", limit: 4096),
            let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 < stat.count
        else { return false }
        return stat[close + 2] == UInt8(ascii: "T") || stat[close + 2] == UInt8(ascii: "t")
    }

    private static func startDaemon(_ runtime: RuntimeDirectory) throws(AnnounceError) -> Int32 {
        let lock = try runtime.lockSpawn()
        defer { lock.release() }
        // Someone else's daemon may have come up while we waited for the lock.
        if let fd = try tryConnect(runtime) { return fd }

        var ends: [Int32] = [0, 0]
        guard announce_cloexec_pipe(&ends) == 0 else { throw .internal("pipe: \(systemErrorMessage(errno))") }
        defer { close(ends[0]) }
        let arguments = ["announce", "daemon", "--idle-exit", autoStartIdleExit, "--ready-fd", "3"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let pid = announce_spawn_detached("/proc/self/exe", &argv, runtime.logPath, ends[1])
        close(ends[1])
        guard pid > 0 else { throw .unavailable("cannot start the daemon: \(systemErrorMessage(-pid))") }

        // The daemon writes "ready" once it listens, "running" if another one owns
        // the directory; it closes the pipe without a word if it fails.
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while answer.last != UInt8(ascii: "\n") {
            let got = read(ends[0], &byte, 1)
            if got < 0 && errno == EINTR { continue }
            guard got == 1 else { break }
            answer.append(byte)
        }
        var status: Int32 = 0
        if answer.isEmpty { waitpid(pid, &status, 0) }
        let word = String(decoding: answer.filter { $0 > 32 }, as: UTF8.self)
        guard word == "ready" || word == "running" else {
            throw .unavailable(
                "the daemon did not start (see \(runtime.logPath)): \(lastLine(of: runtime.logPath) ?? "no message")")
        }
        // "running": another daemon owns the directory and may still be binding its socket.
        var delay: useconds_t = 1000
        for _ in 0..<12 {
            if let fd = try tryConnect(runtime) { return fd }
            usleep(delay)
            delay *= 2
        }
        throw .unavailable("the daemon started but does not answer on \(runtime.socketPath)")
    }

    private static func lastLine(of path: String) -> String? {
        guard let bytes = readWholeFile(path, limit: 8 << 20) else { return nil }
        return bytes.split(separator: UInt8(ascii: "\n")).last.map { String(decoding: $0, as: UTF8.self) }
    }

    /// From now on Ctrl-C (SIGINT), SIGTERM and SIGHUP cancel these items in the
    /// daemon before the process ends (128 + signal): the caller no longer wants them.
    /// So does giving up on a daemon that does not answer (see `next`).
    public func cancelOnInterrupt(ids: [ItemID]) {
        let request = WireProtocol.encode(Request.cancel(.ids(ids)))
        cancelRequest = request
        _ = request.withUnsafeBytes { bytes in
            announce_cancel_on_signal(
                runtime.socketPath, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
        }
    }

    /// The cancel of the items this client waits for, if any.
    private var cancelRequest: [UInt8]?

    /// Leaves the cancel in the socket's backlog without waiting for a reply: a stopped daemon
    /// reads it when it goes on, so what the caller was told did not play does not play later.
    private func cancelWaitedItems() {
        guard let request = cancelRequest else { return }
        let fd = announce_unix_connect(runtime.socketPath, Int32(Self.checkInterval * 1000))
        guard fd >= 0 else { return }
        _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(fd)
    }

    /// Throws unless the daemon answers a status request on a new connection in time. With
    /// no daemon listening it returns: the waiting connection's end says the rest.
    private static func checkAlive(_ runtime: RuntimeDirectory) throws(AnnounceError) {
        guard let fd = try tryConnect(runtime) else { return }
        _ = try DaemonClient(runtime: runtime, fd: fd).call(.status)
    }

    // MARK: messages

    public func send(_ request: Request) throws(AnnounceError) {
        if let error = try deliver(request) {
            throw .unavailable("lost the daemon at \(runtime.socketPath): \(systemErrorMessage(error))")
        }
    }

    /// Sends `request`, and `descriptors` with its first bytes (SCM_RIGHTS, at most
    /// `descriptorsPerMessage` to a byte, in order); the errno when the connection is gone (the
    /// daemon died), else nil.
    private func deliver(_ request: Request, descriptors: [Int32] = []) throws(AnnounceError) -> Int32? {
        let bytes = WireProtocol.encode(request)
        var offset = 0
        let started = SystemClock.monotonic()
        var batches = stride(from: 0, to: descriptors.count, by: Self.descriptorsPerMessage).map {
            Array(descriptors[$0..<min($0 + Self.descriptorsPerMessage, descriptors.count)])
        }[...]
        while offset < bytes.count {
            let batch = batches.first ?? []
            let sent = bytes.withUnsafeBytes { buffer in
                batch.isEmpty
                    ? Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    : batch.withUnsafeBufferPointer {
                        announce_send_descriptors(fd, buffer.baseAddress! + offset, 1, $0.baseAddress, Int32($0.count))
                    }
            }
            if sent < 0 && !batch.isEmpty { errno = Int32(-sent) }
            if sent > 0 && !batch.isEmpty { batches.removeFirst() }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && errno == EAGAIN {  // the connection's send timeout: a slow daemon, or none answering
                try Self.checkAnswering(runtime, waited: SystemClock.monotonic() - started, limit: Self.answerTimeout)
                continue
            }
            guard sent > 0 else { return errno }
            offset += sent
        }
        return nil
    }

    /// The next reply or event; nil when the daemon closed the connection. Waits as long
    /// as the daemon lives (an item may wait hours for its turn): after each `answerTimeout`
    /// of silence the daemon must answer a status request on a second connection, and a
    /// stopped daemon ends the wait at once. `replyWithin` ends it after that long instead.
    /// `watching` false: no such checks, and no wake-up until a message comes (for a client in
    /// the daemon's own process, zones' bridge: the daemon cannot be stopped without it).
    public func next(replyWithin limit: Double? = nil, watching: Bool = true) throws(AnnounceError) -> DaemonMessage? {
        var silentSince = SystemClock.monotonic()
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                let message: DaemonMessage?
                do { message = try DaemonMessage.decode(line) } catch {
                    throw .internal(
                        "the daemon sent something unreadable: \(String(decoding: line.prefix(200), as: UTF8.self))")
                }
                // nil: an event this client does not know (a newer daemon's), not for it.
                if let message { return message }
                continue
            }
            buffer.removeFirst(start)
            start = 0
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(
                &ready, 1, watching ? Int32(max(1, min(Self.checkInterval, limit ?? Self.answerTimeout) * 1000)) : -1)
            if polled < 0 && errno == EINTR { continue }
            if polled == 0 {
                let silent = SystemClock.monotonic() - silentSince
                do {
                    try Self.checkAnswering(runtime, waited: silent, limit: limit)
                    if limit == nil, silent >= Self.answerTimeout {
                        try Self.checkAlive(runtime)
                        silentSince = SystemClock.monotonic()
                    }
                } catch {
                    cancelWaitedItems()
                    throw error
                }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<got])
        }
    }

    /// Sends `request` and returns its reply (events before it are skipped);
    /// a failed reply becomes an error with the daemon's code and message.
    public func call(_ request: Request, descriptors: [Int32] = []) throws(AnnounceError) -> Reply {
        guard let reply = try reply(to: request, descriptors: descriptors) else { throw Self.closedWithoutAnswer }
        return reply
    }

    /// Queues `request`'s items and returns the reply. When the daemon ends the connection
    /// without answering (it died, maybe right after it spooled them), the request goes once
    /// more under the same key to the daemon that starts next (`client` becomes that
    /// connection), which answers with the items it restored for that key, or queues them now:
    /// either way they are queued once (docs/RELIABILITY.md).
    /// `descriptors`: the files the request hands over (`HandedFiles`), sent again with it.
    public static func play(_ request: PlayRequest, descriptors: [Int32] = [], on client: inout DaemonClient)
        throws(AnnounceError) -> Reply
    {
        var request = request
        if request.key == nil {
            request.key = (0..<2).map { _ in String(UInt64.random(in: 0...UInt64.max) | 1 << 63, radix: 16) }.joined()
        }
        if let reply = try client.reply(to: .play(request), descriptors: descriptors) { return reply }
        // Its listening socket may outlive the connection by a moment as its threads exit (its
        // main thread a zombie already): once all are gone, a connection reaches the next daemon.
        // One that lives on closed the connection on purpose: it is not asked twice. (The pid is
        // the one the connection was made with, still known after the close.)
        let daemon = announce_peer_pid(client.fd)
        if daemon > 0, announce_wait_exit(daemon, 5000) == 0 { throw closedWithoutAnswer }
        guard let again = try connect(autoStart: true, runtime: client.runtime, reconnecting: true) else {
            throw closedWithoutAnswer
        }
        client = again
        guard let reply = try client.reply(to: .play(request), descriptors: descriptors) else {
            throw closedWithoutAnswer
        }
        return reply
    }

    private static let closedWithoutAnswer = AnnounceError.unavailable(
        "the daemon closed the connection without answering")

    /// Descriptors sent with one byte: below the kernel's SCM_MAX_FD (253).
    static let descriptorsPerMessage = 250

    /// The reply to `request`; nil when the daemon is gone before it answered.
    private func reply(to request: Request, descriptors: [Int32] = []) throws(AnnounceError) -> Reply? {
        if try deliver(request, descriptors: descriptors) != nil { return nil }
        while let message = try next(replyWithin: Self.answerTimeout) {
            guard case .reply(let reply) = message else { continue }
            if case .failure(let error) = reply { throw .daemon(code: error.code, message: error.message) }
            return reply
        }
        return nil
    }
}
