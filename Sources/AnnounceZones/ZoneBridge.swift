import AnnounceClient
import AnnounceModel
import AnnounceSystem
import FoundationEssentials
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's side of zones (docs/ZONES.md): subscribed to its host topic and its zones' play
/// topics, it turns each play message into a `play` request to its own daemon, over the
/// daemon's socket like any client, so that the queue, priorities, preemption, ducking, quiet
/// mode and the spool treat it exactly as a local play. The final outcome goes back to the
/// sender on the result topic; the host's state is kept, retained, on its status topic.
///
/// Threads: `announce-mqtt` (the link) only fills an inbox; `announce-zones` takes the messages
/// in turn (check, remember the id, store the audio, queue); `announce-zwait` (`ZoneWaiter`)
/// waits for the outcomes of every play taken, on one connection to the daemon;
/// `announce-zstat` follows the daemon's events for the status.
/// The daemon's control thread never waits on the network: it sees only socket clients.
public final class ZoneBridge: DaemonService, @unchecked Sendable {
    public let host: String
    let zones: [String]
    /// Home Assistant discovery (`[mqtt] discovery`).
    let discovery: Bool
    /// What the say topics' texts are spoken with: the config file's `[speech]` engine and voice.
    let speechEngine: SpeechEngine
    let speechVoice: String?
    let link: MQTTLink
    let runtime: RuntimeDirectory
    let logger: Logger
    let seen: SeenPlays
    let status: StatusPublisher
    private var worker: pthread_t?
    /// Waits for the outcomes of the plays taken here.
    let waiter: ZoneWaiter
    /// More than this many plays waiting at once are refused (69): each keeps its items' outcomes.
    static let maxWaiting = 256
    /// Connected to the broker now (the worker's view).
    private let connected = Atomic<Bool>(false)
    /// Once stopping, what the broker acknowledged: the goodbye status is waited for.
    private let goodbye = Mutex<(stopping: Bool, acknowledged: Set<Int32>)>((false, []))
    private let goodbyeNews = CountingSemaphore()
    /// Longest wait for the goodbye's acknowledgement.
    static let goodbyeWait = 2.0

    /// The bridge for `settings`, connecting in the background; nil (with the reason logged)
    /// when it cannot run: no libmosquitto, a host name that cannot be a topic.
    public static func start(
        _ settings: MQTTSettings, speechEngine: SpeechEngine?, speechVoice: String?,
        runtime: RuntimeDirectory, logger: Logger
    ) -> ZoneBridge? {
        do {
            let bridge = try ZoneBridge(
                settings, speechEngine: speechEngine ?? .default, speechVoice: speechVoice,
                runtime: runtime, logger: logger)
            try bridge.link.start()
            bridge.worker = startThread(named: "announce-zones") { bridge.run() }
            bridge.status.follow()
            bridge.seen.resumeWaits(bridge)
            logger.info(
                "zones: host \(bridge.host), zones \(bridge.zones.joined(separator: ", ")), broker \(settings.broker)")
            return bridge
        } catch {
            logger.error("zones are off: \(error.description)")
            return nil
        }
    }

    private init(
        _ settings: MQTTSettings, speechEngine: SpeechEngine, speechVoice: String?, runtime: RuntimeDirectory,
        logger: Logger
    ) throws(AnnounceError) {
        let host = settings.host ?? Self.machineName()
        if let problem = ZoneName.problem(host, kind: "host") {
            throw .usage("[mqtt] host: \(problem); set host = NAME")
        }
        self.host = host
        zones = settings.zones
        discovery = settings.discovery
        self.speechEngine = speechEngine
        self.speechVoice = speechVoice
        self.runtime = runtime
        self.logger = logger
        let offline = HostStatus(host: host, zones: settings.zones, state: .offline)
        link = try MQTTLink(
            settings: settings, clientID: "announce-\(host)", sessionExpiry: ZoneLimits.sessionExpiry,
            will: (ZoneTopic.status(host).name, JSONCoding.encode(offline, orElse: "{}")))
        seen = try SeenPlays(directory: runtime.path + "/zones")
        status = StatusPublisher(host: host, zones: settings.zones, runtime: runtime)
        waiter = ZoneWaiter(runtime: runtime)
        status.bridge = self
        waiter.bridge = self
    }

    /// Says `offline` (a clean disconnect sends no last will) and disconnects once the broker
    /// has it: a DISCONNECT right behind it could overtake it, and the broker then published the
    /// last will, which senders take for a host that may be reconnecting.
    public func stop() {
        goodbye.withLock { $0.stopping = true }
        if let mid = status.publishOffline(), connected.load(ordering: .relaxed) {
            let until = SystemClock.monotonic() + Self.goodbyeWait
            while !goodbye.withLock({ $0.acknowledged.contains(mid) }), case let left = until - SystemClock.monotonic(),
                left > 0
            {
                _ = goodbyeNews.wait(seconds: left)
            }
        }
        link.close()
        if let worker { pthread_join(worker, nil) }
    }

    /// The machine's hostname up to its first dot: a host's name when [mqtt] gives none.
    public static func machineName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "localhost" }
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: ".").first.map(String.init) ?? "localhost"
    }

    /// The topics this host plays from, and speaks from: its own, its zones' and `all`'s.
    var playTopics: [String] {
        let zones = zones + [ZoneTopic.allZone]
        return [ZoneTopic.hostPlay(host).name, ZoneTopic.hostSay(host).name, ZoneTopic.hostCancel(host).name]
            + zones.flatMap { [ZoneTopic.zonePlay($0).name, ZoneTopic.zoneSay($0).name, ZoneTopic.zoneCancel($0).name] }
    }

    private func run() {
        var lastSubscription: Int32?
        while let happening = link.next(until: nil) {
            switch happening {
            case .connected:
                connected.store(true, ordering: .relaxed)
                logger.info("zones: connected to \(link.broker)")
                for topic in playTopics {
                    // Texts are taken at most once (QoS 0), as Home Assistant sends them.
                    let qos: Int32 = topic.hasSuffix("/say") ? 0 : 1
                    do { lastSubscription = try link.subscribe(topic, qos: qos) } catch {
                        logger.error("zones: \(error.description)")
                    }
                }
                status.publish(force: true)
                if discovery { announceToHomeAssistant() }
            case .subscribed(let mid) where mid == lastSubscription:
                logger.info("zones: subscribed to \(playTopics.count) topics")
            case .refused(let reason): logger.error("zones: \(link.broker) refused the connection: \(reason)")
            case .lost(let reason):
                connected.store(false, ordering: .relaxed)
                logger.warning("zones: lost \(link.broker) (\(reason)); connecting again")
            case .message(let topic, _, true, _):
                // A retained play, text or cancel would come again at every (re)subscription, and
                // a text (no id) would be spoken again each time: none is taken.
                logger.warning(
                    "zones: ignored a retained message on \(topic): plays, texts and cancels are never retained")
            case .message(let topic, let payload, false, let expiry):
                receive(topic: topic, payload: payload, expiryLeft: expiry)
            case .oversized(let topic, let bytes):
                logger.warning(
                    "zones: dropped a message on \(topic): \(bytes) bytes is over \(ZoneLimits.maxMessageBytes)")
            case .overflow(0): logger.warning("zones: messages come faster than this host takes them: dropping them")
            case .overflow(let dropped):
                logger.warning("zones: dropped \(dropped) message(s) that came while the inbox was full")
            case .published(let mid, _):
                if goodbye.withLock({ $0.stopping ? $0.acknowledged.insert(mid).inserted : false }) {
                    goodbyeNews.signal()
                }
            case .subscribed: break
            case .closed: return
            }
        }
    }

    /// One message on a play topic: checked, remembered, queued; a refusal is answered. (The
    /// log handler escapes every line: a topic or reason cannot forge one.)
    /// `expiryLeft`: what the broker says is left of its expiry (it waited the rest there).
    func receive(topic: String, payload: [UInt8], expiryLeft: Double?) {
        switch ZoneTopic(topic) {
        case .hostPlay(host)?: break
        case .zonePlay(let zone)? where isMine(zone): break
        case .hostSay(host)?: return say(payload, topic: topic)
        case .zoneSay(let zone)? where isMine(zone): return say(payload, topic: topic)
        case .hostCancel(host)?: return cancel(payload, topic: topic)
        case .zoneCancel(let zone)? where isMine(zone): return cancel(payload, topic: topic)
        default: return logger.warning("zones: ignored a message on \(topic), not a topic of this host")
        }
        var play: RemotePlay
        switch RemotePlay.decode(payload) {
        case .success(let decoded): play = decoded
        case .failure(let refusal):
            logger.warning("zones: dropped a message on \(topic): \(refusal.reason)")
            if let id = refusal.id, seen.remember(id, expires: clock() + ZoneLimits.refusedRetention, durable: false) {
                answer(
                    id, [Outcome(.failed, reason: refusal.reason, code: AnnounceError.usage(refusal.reason).exitCode)])
            }
            return
        }
        // Remembered before it is queued: QoS 1 may bring it again, and it must not play twice.
        guard seen.remember(play.id, expires: clock() + (play.expiry ?? 0) + ZoneLimits.seenRetention) else {
            if seen.wasCancelled(play.id) {
                return logger.info("zones: play \(play.id) from \(play.from) was cancelled before it came")
            }
            return logger.info("zones: play \(play.id) from \(play.from) came again; played once")
        }
        // The time it waited at the broker counts against its delays and expiries, as a local
        // play's waiting in the queue does (whole seconds, on the broker's clock alone).
        let waited = play.waitedAtBroker(expiryLeft: expiryLeft)
        play.age(by: waited)
        accept(play, topic: topic, waited: waited, answered: true)
    }

    private func isMine(_ zone: String) -> Bool { zone == ZoneTopic.allZone || zones.contains(zone) }

    /// A play's cancel: its items here are cancelled; one not come yet is remembered, never to play.
    private func cancel(_ payload: [UInt8], topic: String) {
        guard let cancel = RemoteCancel.decode(payload) else {
            return logger.warning("zones: dropped a message on \(topic): not a cancel")
        }
        if seen.remember(cancel.id, expires: clock() + ZoneLimits.seenRetention, cancelled: true) {
            return logger.info("zones: play \(cancel.id) cancelled by \(cancel.from) before it came")
        }
        guard let ids = seen.ids(of: cancel.id), !ids.isEmpty else { return }
        do {
            guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime) else { return }
            _ = try client.call(.cancel(.ids(ids)))
            logger.info("zones: play \(cancel.id) cancelled by \(cancel.from)")
        } catch {
            logger.warning("zones: cannot cancel play \(cancel.id): \(error.description)")
        }
    }

    /// A say topic's text (Home Assistant's notify): spoken as `announce say` would, with this
    /// host's speech settings. No one waits for it: no result is published.
    private func say(_ payload: [UInt8], topic: String) {
        switch HomeAssistant.text(payload) {
        case .failure(let refusal): logger.warning("zones: dropped a message on \(topic): \(refusal.reason)")
        case .success(let text):
            let speech = Speech(text: text, engine: speechEngine, voice: speechVoice)
            if let problem = speech.problem {
                return logger.warning("zones: dropped a message on \(topic): \(problem)")
            }
            let item = ItemRequest(clip: Clip(path: speech.label, speech: speech))
            // A new id that nobody can send again: nothing to remember (no record is written).
            let play = RemotePlay(id: PlayID.random(), from: "text", sent: clock(), items: [RemoteItem(item: item)])
            accept(play, topic: topic, waited: 0, answered: false)
        }
    }

    /// Queues `play` (its id remembered already) and, when `answered`, publishes its outcome.
    private func accept(_ play: RemotePlay, topic: String, waited: Double, answered: Bool) {
        guard waiter.count < Self.maxWaiting else {
            logger.warning(
                "zones: play \(play.id) from \(play.from) refused: \(Self.maxWaiting) plays are waiting already")
            if answered {
                answer(
                    play.id,
                    [
                        Outcome(
                            .failed, reason: "\(Self.maxWaiting) plays are waiting on \(host) already",
                            code: AnnounceError.unavailable("").exitCode)
                    ])
            }
            return
        }
        do {
            let ids = try enqueue(play)
            seen.record(play.id, ids: ids)
            let note = waited > 0 ? " (it waited \(Int(waited)) s at the broker)" : ""
            logger.info(
                "zones: play \(play.id) from \(play.from) on \(topic) queued as \(ids.listed)\(note)")
            try waiter.wait(for: play.id, ids: ids, answered: answered)
        } catch {
            logger.warning("zones: play \(play.id) from \(play.from) not queued: \(error.description)")
            if answered { answer(play.id, [Outcome(.failed, reason: error.description, code: error.exitCode)]) }
        }
    }

    /// Queues `play` on this host's daemon: its audio and chimes into the media directory first,
    /// as `play -` does.
    private func enqueue(_ play: RemotePlay) throws(AnnounceError) -> [ItemID] {
        let media = MediaDirectory(runtime: runtime)
        var files: [MediaFile] = []
        defer { for file in files { file.release() } }
        func store(_ bytes: Data?, label: String) throws(AnnounceError) -> MediaFile? {
            guard let bytes else { return nil }
            let writer = try media.begin(
                label: label, limit: ZoneLimits.maxAudioBytes, overLimit: "the most a zone message carries")
            let appended: Result<Void, AnnounceError> = bytes.withUnsafeBytes { bytes in
                Result { () throws(AnnounceError) in try writer.append(bytes) }
            }
            try appended.get()
            let file = try writer.finish()
            files.append(file)
            return file
        }
        var items: [ItemRequest] = []
        do {
            for entry in play.items {
                let audio = try store(entry.audio, label: entry.item.clip.path)
                let chime = try store(entry.chime, label: "chime")
                let chimeAfter = try store(entry.chimeAfter, label: "chime-after")
                items.append(
                    entry.local(
                        media: audio?.name, chime: chime.map { media.filePath($0.name) },
                        chimeAfter: chimeAfter.map { media.filePath($0.name) }))
            }
        } catch {
            for file in files { file.discard() }  // a full disk: nothing of it stays
            throw error
        }
        guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime) else {
            for file in files { file.discard() }
            throw .unavailable("the daemon does not answer at \(runtime.socketPath)")
        }
        do {
            let reply = try client.call(.play(items: items, wait: false))
            return reply.ids ?? []
        } catch {
            // Refused: nothing of it is queued. Otherwise the answer was lost and the daemon may
            // have spooled it (a daemon sweeps at start the media no item names).
            if case .daemon = error { for file in files { file.discard() } }
            throw error
        }
    }

    /// Home Assistant's discovery messages, retained: the host's notify entity and its zones'.
    private func announceToHomeAssistant() {
        for entity in HomeAssistant.entities(host: host, zones: zones) {
            do { try link.publish(entity.topic, JSONCoding.encode(entity, orElse: "{}"), retain: true) } catch {
                logger.error("zones: \(error.description)")
            }
        }
    }

    /// Publishes this host's result of play `request`.
    func answer(_ request: PlayID, _ outcomes: [Outcome]) {
        let result = RemoteResult(id: request, host: host, outcomes: outcomes, time: clock())
        do {
            try link.publish(
                ZoneTopic.result(request: request, host: host).name, JSONCoding.encode(result, orElse: "{}"))
        } catch {
            logger.error("zones: \(error.description)")
        }
    }

    func clock() -> Double { SystemClock.wall() }
}

/// A connection handed to the thread that waits on it; nobody else touches it after.
struct Handoff: @unchecked Sendable {
    let client: DaemonClient
    init(_ client: DaemonClient) { self.client = client }
}
