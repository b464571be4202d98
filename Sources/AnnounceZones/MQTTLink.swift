import AnnounceModel
import AnnounceSystem
import CMosquitto
import CPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to the MQTT broker (libmosquitto through CMosquitto, loaded on first use):
/// MQTT 5, QoS 1. Its network loop and callbacks run on the `announce-mqtt` thread, which only
/// puts what happened in an inbox; the owner takes it out with `next` on a thread of its own.
/// `subscribe` and `publish` only queue packets: they never wait on the network.
final class MQTTLink: @unchecked Sendable {
    enum Happening: Sendable {
        case connected
        /// The broker refused the connection (bad credentials, a client id it rejects).
        case refused(String)
        /// The connection was lost, or could not be made; the link tries again by itself.
        case lost(String)
        /// `expiry`: the seconds left of its MQTT 5 message expiry; nil: it has none.
        case message(topic: String, payload: [UInt8], retained: Bool, expiry: Double?)
        /// A message over `ZoneLimits.maxMessageBytes`, not taken (the broker should not have sent it).
        case oversized(topic: String, bytes: Int)
        /// The inbox was full (`Inbox.maxBytes`): 0, messages are being dropped; N, it has room again
        /// after dropping N.
        case overflow(dropped: Int)
        case subscribed(Int32)
        case published(Int32, accepted: Bool)
        /// `close` was called: the owner's loop ends.
        case closed
    }

    private let session: OpaquePointer
    /// Held while the session is used from the owner's threads: `close` frees it under the lock,
    /// so a late publish (a waiting thread's result) finds the link closed instead of freed memory.
    private let open = Mutex(true)
    private let inbox = Inbox()
    private let box: Unmanaged<Inbox>
    let broker: MQTTSettings.Broker

    /// A link for `clientID`; `sessionExpiry` (seconds): the broker keeps its subscriptions and
    /// queued QoS 1 messages while it is away, for that long (clean start off); nil: a clean
    /// session, gone with the connection. `will`: published (retained) by the broker when the
    /// connection is lost without a goodbye.
    init(
        settings: MQTTSettings, clientID: String, sessionExpiry: UInt32?,
        will: (topic: String, payload: [UInt8])? = nil
    ) throws(AnnounceError) {
        if let problem = announce_mqtt_load() { throw .unavailable(String(cString: problem)) }
        broker = settings.broker
        box = Unmanaged.passRetained(inbox)
        var why: UnsafePointer<CChar>?
        let callbacks = announce_mqtt_callbacks(
            connected: { context, reason in
                MQTTLink.inbox(context).put(
                    reason == 0 ? .connected : .refused(String(cString: announce_mqtt_reason(reason))))
            },
            disconnected: { context, reason, why in
                // 0: `close` asked for it, and says `.closed` itself.
                if reason != 0 { MQTTLink.inbox(context).put(.lost(why.map { String(cString: $0) } ?? "lost")) }
            },
            message: { context, topic, payload, length, retained, expiry in
                let inbox = MQTTLink.inbox(context)
                let topic = topic.map { String(cString: $0) } ?? ""
                guard inbox.hasRoom(for: length) else { return inbox.drop() }
                let bytes = payload.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                inbox.put(
                    .message(
                        topic: topic, payload: bytes, retained: retained, expiry: expiry >= 0 ? Double(expiry) : nil))
            },
            oversized: { context, topic, length in
                MQTTLink.inbox(context).put(.oversized(topic: topic.map { String(cString: $0) } ?? "", bytes: length))
            },
            subscribed: { context, mid in MQTTLink.inbox(context).put(.subscribed(mid)) },
            published: { context, mid, reason in MQTTLink.inbox(context).put(.published(mid, accepted: reason < 128)) })
        guard
            let session = announce_mqtt_new(
                clientID, sessionExpiry == nil, sessionExpiry ?? 0,
                UInt32(ZoneLimits.maxMessageBytes), callbacks, box.toOpaque(), &why)
        else {
            box.release()
            throw .unavailable("MQTT: \(why.map { String(cString: $0) } ?? "cannot make a session")")
        }
        self.session = session
        do {
            try configure(settings, will: will)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
        box.release()
    }

    /// Disconnects (after what was queued went out), stops the link's thread and tells the owner
    /// (`.closed`). Once.
    func close() {
        let wasOpen = open.withLock { isOpen in
            defer { isOpen = false }
            if isOpen { announce_mqtt_free(session) }
            return isOpen
        }
        if wasOpen { inbox.put(.closed) }
    }

    /// `call`'s code with the session, while the link is open; a closed link is an error.
    private func using(_ what: String, _ call: (OpaquePointer) -> Int32) throws(AnnounceError) {
        guard let code = open.withLock({ $0 ? call(session) : nil }) else {
            throw .unavailable("MQTT \(what): the link is closed")
        }
        try check(code, what)
    }

    private static func inbox(_ context: UnsafeMutableRawPointer?) -> Inbox {
        Unmanaged<Inbox>.fromOpaque(context!).takeUnretainedValue()
    }

    private func configure(_ settings: MQTTSettings, will: (topic: String, payload: [UInt8])?) throws(AnnounceError) {
        if settings.broker.tls || settings.caFile != nil || settings.certFile != nil {
            let ca = settings.caFile.map(Self.expandingHome)
            let cert = settings.certFile.map(Self.expandingHome)
            let key = settings.keyFile.map(Self.expandingHome)
            try check(announce_mqtt_tls(session, ca, cert, key), "TLS (ca-file, cert-file, key-file)")
        }
        if let username = settings.username {
            try check(announce_mqtt_credentials(session, username, try Self.password(settings)), "username/password")
        }
        if let will {
            try check(
                will.payload.withUnsafeBytes {
                    announce_mqtt_will(session, will.topic, $0.baseAddress, $0.count, 1, true)
                }, "last will")
        }
    }

    /// Starts connecting (and reconnecting) on the link's thread.
    func start(keepalive: Int32 = 30) throws(AnnounceError) {
        try check(announce_mqtt_start(session, broker.host, Int32(broker.port), keepalive), "connect to \(broker)")
    }

    /// `qos` 1, or 0 for what is taken at most once (say texts).
    @discardableResult
    func subscribe(_ pattern: String, qos: Int32 = 1) throws(AnnounceError) -> Int32 {
        var mid: Int32 = 0
        try using("subscribe to \(pattern)") { announce_mqtt_subscribe($0, pattern, qos, &mid) }
        return mid
    }

    /// QoS 1; `expiry`: MQTT 5 message expiry, in whole seconds (at least 1).
    @discardableResult
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool = false, expiry: Double? = nil) throws(AnnounceError)
        -> Int32
    {
        var mid: Int32 = 0
        let seconds = expiry.map { UInt32(min(max(1, $0.rounded(.up)), Double(UInt32.max))) } ?? 0
        try using("publish to \(topic)") { session in
            payload.withUnsafeBytes {
                announce_mqtt_publish(session, topic, $0.baseAddress, $0.count, 1, retain, seconds, &mid)
            }
        }
        return mid
    }

    /// What happened next, waiting at most until `deadline` (monotonic seconds; nil: for good);
    /// nil also once the process got SIGINT, SIGTERM or SIGHUP after `wakeOnInterrupt`.
    /// `interruptible` false: a signal does not end this wait (the cancel's own, after one).
    func next(until deadline: Double?, interruptible: Bool = true) -> Happening? {
        inbox.take(until: deadline, interruptible: interruptible)
    }

    /// From now on SIGINT, SIGTERM and SIGHUP end `next`'s wait instead of the process
    /// (`interruption` says which came): the owner undoes what it started, then exits.
    func wakeOnInterrupt() { announce_interrupt_posting(inbox.wake) }

    /// The signal that came since `wakeOnInterrupt`, if one did.
    var interruption: Int32? { announce_interrupted() == 0 ? nil : announce_interrupted() }

    private func check(_ code: Int32, _ what: String) throws(AnnounceError) {
        guard code != 0 else { return }
        throw .unavailable("MQTT \(what): \(String(cString: announce_mqtt_error(code)))")
    }

    /// `~/x` under $HOME.
    static func expandingHome(_ path: String) -> String {
        guard path.hasPrefix("~/"), let home = getenv("HOME") else { return path }
        return String(cString: home) + path.dropFirst(1)
    }

    /// `password`, else the first line of `password-file`.
    static func password(_ settings: MQTTSettings) throws(AnnounceError) -> String? {
        if let password = settings.password { return password }
        guard let file = settings.passwordFile.map(expandingHome) else { return nil }
        guard let bytes = readWholeFile(file, limit: 4096) else {
            throw .cannotOpen(path: file, reason: "password-file: \(systemErrorMessage(errno))")
        }
        return String(decoding: bytes.prefix { $0 != 10 && $0 != 13 }, as: UTF8.self)
    }

    /// Happenings from the link's thread to its owner. Messages waiting hold at most `maxBytes`
    /// of payload: a flood is dropped (and said once per run of drops), not kept in memory.
    final class Inbox: Sendable {
        private struct Queue {
            var happenings: [Happening] = []
            var bytes = 0
            /// Messages dropped since the last one queued: one `.dropped` says how many.
            var dropped = 0
        }

        private let queue = Mutex(Queue())
        private let ready = CountingSemaphore()
        var wake: UnsafeMutablePointer<sem_t> { ready.posix }
        /// Four of the largest messages.
        static let maxBytes = 4 * ZoneLimits.maxMessageBytes

        func hasRoom(for length: Int) -> Bool {
            queue.withLock { $0.bytes + length <= Self.maxBytes }
        }

        func put(_ happening: Happening) {
            queue.withLock { queue in
                if case .message(_, let payload, _, _) = happening {
                    if queue.dropped > 0 { queue.happenings.append(.overflow(dropped: queue.dropped)) }
                    queue.dropped = 0
                    queue.bytes += payload.count
                }
                queue.happenings.append(happening)
            }
            ready.signal()
        }

        /// A message that found the inbox full: the first of a run is said at once.
        func drop() {
            let first = queue.withLock { queue in
                queue.dropped += 1
                if queue.dropped == 1 { queue.happenings.append(.overflow(dropped: 0)) }
                return queue.dropped == 1
            }
            if first { ready.signal() }
        }

        func take(until deadline: Double?, interruptible: Bool) -> Happening? {
            while true {
                if interruptible && announce_interrupted() != 0 { return nil }
                if let first = next() { return first }
                if let deadline {
                    let left = deadline - SystemClock.monotonic()
                    if left <= 0 || !ready.wait(seconds: left) { return next() }
                } else {
                    ready.wait()
                }
            }
        }

        private func next() -> Happening? {
            queue.withLock { queue in
                guard !queue.happenings.isEmpty else { return nil }
                let first = queue.happenings.removeFirst()
                if case .message(_, let payload, _, _) = first { queue.bytes -= payload.count }
                return first
            }
        }
    }
}
