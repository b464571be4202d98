import FoundationEssentials

/// The wire protocol between clients and the daemon: one JSON object per
/// line over the Unix socket (docs/protocol.md). Every message carries `v`.
public enum WireProtocol {
    public static let version = 1
    /// Longer request lines get an error reply and the connection closes
    /// (1000 items with long paths fit).
    public static let maxLineBytes = 1 << 20

    /// One line: the JSON object and a newline.
    public static func encode<Message: Encodable>(_ message: Message) -> [UInt8] {
        var bytes = JSONCoding.encode(message, orElse: #"{"v":1,"ok":false}"#)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

/// `--if-busy`: what an item does when another program holds its device.
public enum IfBusy: String, Codable, CaseIterable, Sendable {
    /// Wait for the device to come free, bounded by the item's `expire` (the default).
    case wait
    /// End at once as `failed` with 69, naming who holds the device.
    case fail
}

/// One clip to enqueue, with its queue options (`announce play`'s flags).
public struct ItemRequest: Codable, Equatable, Sendable {
    public var clip: Clip
    public var priority: Priority?
    /// False for `--no-interrupt`.
    public var interrupts: Bool?
    public var onInterrupt: InterruptAction?
    public var dropAfter: Double?
    public var tag: String?
    /// Cancel every queued or playing item with `tag`.
    public var replace: Bool?
    /// Eligible at this time (seconds since the epoch; the client resolves `--at HH:MM`).
    public var at: Double?
    /// Eligible this many seconds after arrival.
    public var delay: Double?
    /// Must start within this many seconds of becoming eligible.
    public var expire: Double?
    /// `--category`, `--mode` and the session options; nil is `AudioSession.default` (solo-ambient).
    /// Requests written before sessions existed carry only `"category"`, which decodes into this.
    public var session: AudioSession?
    /// `--duck-level`, dB (-60 to 0): how far a duck-others item lowers the other streams;
    /// nil is the daemon's configured level.
    public var duckLevel: Double?
    /// `--if-busy`; nil is `wait`.
    public var ifBusy: IfBusy?
    /// `--if-other-audio`; nil is `play`.
    public var ifOtherAudio: IfOtherAudio?

    public init(
        clip: Clip, priority: Priority? = nil, interrupts: Bool? = nil, onInterrupt: InterruptAction? = nil,
        dropAfter: Double? = nil, tag: String? = nil, replace: Bool? = nil, at: Double? = nil,
        delay: Double? = nil, expire: Double? = nil, session: AudioSession? = nil, duckLevel: Double? = nil,
        ifBusy: IfBusy? = nil, ifOtherAudio: IfOtherAudio? = nil
    ) {
        self.clip = clip
        self.priority = priority
        self.interrupts = interrupts
        self.onInterrupt = onInterrupt
        self.dropAfter = dropAfter
        self.tag = tag
        self.replace = replace
        self.at = at
        self.delay = delay
        self.expire = expire
        self.session = session
        self.duckLevel = duckLevel
        self.ifBusy = ifBusy
        self.ifOtherAudio = ifOtherAudio
    }

    /// The session's category (nil when no session is given); setting it keeps the other session fields.
    public var category: SessionCategory? {
        get { session?.category }
        set { session = AudioSession.replacingCategory(of: session, with: newValue) }
    }

    private enum CodingKeys: String, CodingKey {
        case clip, priority, interrupts, onInterrupt, dropAfter, tag, replace, at, delay, expire, session, duckLevel,
            ifBusy
        case ifOtherAudio
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        clip = try container.decode(Clip.self, forKey: .clip)
        priority = try container.decodeIfPresent(Priority.self, forKey: .priority)
        interrupts = try container.decodeIfPresent(Bool.self, forKey: .interrupts)
        onInterrupt = try container.decodeIfPresent(InterruptAction.self, forKey: .onInterrupt)
        dropAfter = try container.decodeIfPresent(Double.self, forKey: .dropAfter)
        tag = try container.decodeIfPresent(String.self, forKey: .tag)
        replace = try container.decodeIfPresent(Bool.self, forKey: .replace)
        at = try container.decodeIfPresent(Double.self, forKey: .at)
        delay = try container.decodeIfPresent(Double.self, forKey: .delay)
        expire = try container.decodeIfPresent(Double.self, forKey: .expire)
        session = try AudioSession.decode(from: decoder, key: .session, in: container)
        duckLevel = try container.decodeIfPresent(Double.self, forKey: .duckLevel)
        ifBusy = try container.decodeIfPresent(IfBusy.self, forKey: .ifBusy)
        ifOtherAudio = try container.decodeIfPresent(IfOtherAudio.self, forKey: .ifOtherAudio)
    }
}

/// `announce alert`: a system sound (DESIGN §3, System sounds). Plays at once, mixed over
/// everything; never queued, never preempted, not spooled.
public struct AlertRequest: Codable, Equatable, Sendable, NamedFile {
    /// Absolute path of a PCM WAV, CAF or AIFF file of at most `SystemSound.maxSeconds`.
    public var path: String
    /// As `Clip.pathBytes`: the path's bytes when they are not UTF-8.
    public var pathBytes: FileName?
    /// Linear gain, 0 to 16, on top of the normalised level.
    public var gain: Float
    /// As `Clip.loudness`.
    public var loudness: LoudnessTarget?
    /// `--ignore-quiet`: plays in quiet mode (nil or false: silenced while quiet mode is on).
    public var ignoreQuiet: Bool?
    /// ALSA PCM; nil plays on the daemon's device.
    public var device: DeviceName?
    /// The caller's sound-server variables, as `Clip.environment`.
    public var environment: [String: String]?
    /// System queue: the index of the descriptor the client handed the sound over as (`HandedFiles`).
    public var handed: Int?

    public init(
        path: String, gain: Float = 1, ignoreQuiet: Bool? = nil, device: DeviceName? = nil,
        environment: [String: String]? = nil
    ) {
        self.path = path
        self.pathBytes = nil
        self.gain = gain
        self.ignoreQuiet = ignoreQuiet
        self.device = device
        self.environment = environment
    }
}

/// One item as `announce queue` / `status` shows it.
public struct ItemStatus: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable { case playing, queued, interrupted, scheduled }

    public var id: ItemID
    public var state: State
    public var path: String
    public var priority: Priority
    public var tag: String?
    public var device: DeviceName?
    /// Seconds heard so far (the resume point), when known.
    public var heard: Double?
    /// Seconds the whole program lasts, when known.
    public var duration: Double?
    public var eligibleAt: Double?
    public var expiresAt: Double?
    /// Its session, when it is not the default (`ambient (duck-others)`).
    public var session: String?
    /// Lowered to the duck level (or ramping there) while a duck-others session plays.
    public var ducked: Bool?
    /// A live stream's current title (ICY StreamTitle, or an Ogg link's ARTIST - TITLE).
    public var title: String?
    /// System queue: who queued it.
    public var owner: ItemOwner?
}

extension ItemStatus {
    /// What `item` says of itself in `state`; the daemon adds what it knows of the playback (heard,
    /// duration, ducked, title).
    public init(_ item: QueueItem, _ state: State) {
        self.init(
            id: item.id, state: state, path: item.clip.path, priority: item.priority, tag: item.tag,
            device: item.clip.device, eligibleAt: item.eligibleAt, expiresAt: item.started ? nil : item.expiresAt,
            session: item.audioSession == .default ? nil : item.audioSession.description, owner: item.owner)
    }
}

public struct DaemonStatus: Codable, Equatable, Sendable {
    public var pid: Int32
    public var device: DeviceName
    /// The device is open now (it is closed while idle).
    public var deviceOpen: Bool
    public var paused: Bool
    /// When the user paused the queue (seconds since the epoch).
    public var pausedSince: Double?
    /// The daemon exits after this many seconds idle; absent for one that runs until stopped.
    public var idleExit: Double?
    /// A client started it (it has an idle exit); `announce daemon` takes over from such a one.
    public var autoStarted: Bool?
    public var playing: ItemStatus?
    /// Mixable sessions and alerts playing over the main lane (or paused by an interruption).
    public var mixing: [ItemStatus]?
    /// Why the main lane waits apart from a pause (`QueueHold.reason`): device-busy, device-lost,
    /// a session's interruption, waiting for announce resume.
    public var holds: [EventReason]?
    /// Waiting to play, in play order.
    public var queued: [ItemStatus]
    /// Held until their time, earliest first.
    public var scheduled: [ItemStatus]
    /// Quiet mode is in effect now (ambient and solo-ambient items end `silenced`).
    public var quiet: Bool
    /// The manual switch while it counts (`on`, `off`, `until`); absent when there is none or it lapsed.
    public var quietSetting: QuietSwitch?
    /// With quietSetting `until`: when it ends.
    public var quietUntil: Double?
    /// The config file's quiet hours (`HH:MM-HH:MM` on the wire).
    public var quietHours: [QuietHours]
    /// Why quiet mode is on or off now.
    public var quietReason: String?
    /// What quiet mode does: `silent`, or the night level in dB (the config file's `quiet-level`).
    public var quietLevel: QuietLevel?
    /// The daemon on the session bus (its MPRIS name and the bus's address), or why it is not.
    public var sessionBus: String?
    /// Other applications' audio lowered by a duck-others item; absent from a daemon that never ducks others (tests).
    public var otherAudio: OtherAudioStatus?
    /// Another application plays on the sound server (its uncorked streams, not announce's):
    /// iOS isOtherAudioPlaying. Absent when no sound server answers (or in tests without one).
    public var otherAudioPlaying: Bool?
    /// Those streams (`OtherAudioScene.name`).
    public var otherAudioStreams: [String]?
    /// A call's stream that holds announce (`interruption-began` reason `call`).
    public var call: String?

    public init(
        pid: Int32, device: DeviceName, deviceOpen: Bool, paused: Bool, playing: ItemStatus?,
        queued: [ItemStatus], scheduled: [ItemStatus], quiet: QuietState = .notQuiet
    ) {
        self.pid = pid
        self.device = device
        self.deviceOpen = deviceOpen
        self.paused = paused
        self.playing = playing
        self.queued = queued
        self.scheduled = scheduled
        self.quiet = quiet.quiet
        quietSetting = quiet.setting
        quietUntil = quiet.until
        quietHours = quiet.hours
        quietReason = quiet.reason.isEmpty ? nil : quiet.reason
        quietLevel = quiet.level
    }

    /// The quiet fields as one value.
    public var quietState: QuietState {
        QuietState(
            quiet: quiet, setting: quietSetting, until: quietUntil, hours: quietHours, reason: quietReason ?? "",
            level: quietLevel)
    }
}

extension DaemonStatus {
    /// As synthesized, except that a quiet-hours window this version cannot read (a newer
    /// daemon's) is left out rather than failing the whole status: clients ignore what they do
    /// not know (docs/protocol.md, Versions), and a waiting `play` reads status to see the
    /// daemon is alive.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        pid = try container.decode(Int32.self, forKey: .pid)
        device = try container.decode(DeviceName.self, forKey: .device)
        deviceOpen = try container.decode(Bool.self, forKey: .deviceOpen)
        paused = try container.decode(Bool.self, forKey: .paused)
        pausedSince = try container.decodeIfPresent(Double.self, forKey: .pausedSince)
        idleExit = try container.decodeIfPresent(Double.self, forKey: .idleExit)
        autoStarted = try container.decodeIfPresent(Bool.self, forKey: .autoStarted)
        playing = try container.decodeIfPresent(ItemStatus.self, forKey: .playing)
        mixing = try container.decodeIfPresent([ItemStatus].self, forKey: .mixing)
        holds = try container.decodeIfPresent([EventReason].self, forKey: .holds)
        queued = try container.decode([ItemStatus].self, forKey: .queued)
        scheduled = try container.decode([ItemStatus].self, forKey: .scheduled)
        quiet = try container.decode(Bool.self, forKey: .quiet)
        quietSetting = try container.decodeIfPresent(QuietSwitch.self, forKey: .quietSetting)
        quietUntil = try container.decodeIfPresent(Double.self, forKey: .quietUntil)
        quietHours = try container.decode([String].self, forKey: .quietHours).compactMap {
            try? QuietHours(parsing: $0)
        }
        quietReason = try container.decodeIfPresent(String.self, forKey: .quietReason)
        quietLevel = (try? container.decodeIfPresent(QuietLevel.self, forKey: .quietLevel)) ?? nil
        sessionBus = try container.decodeIfPresent(String.self, forKey: .sessionBus)
        // A state this version does not know (a newer daemon's) leaves it out, as above.
        otherAudio = (try? container.decodeIfPresent(OtherAudioStatus.self, forKey: .otherAudio)) ?? nil
        otherAudioPlaying = try container.decodeIfPresent(Bool.self, forKey: .otherAudioPlaying)
        otherAudioStreams = try container.decodeIfPresent([String].self, forKey: .otherAudioStreams)
        call = try container.decodeIfPresent(String.self, forKey: .call)
    }
}

extension AudioSession {
    /// `session` with another category (nil: the default one); nil stays nil when there is no category to set.
    static func replacingCategory(of session: AudioSession?, with category: SessionCategory?) -> AudioSession? {
        guard session != nil || category != nil else { return nil }
        var result = session ?? AudioSession()
        result.category = category ?? .default
        return result
    }

    /// The session under `key`, else one made from a top-level `"category"`: what requests and
    /// spool entries written before sessions existed carry. `key` wins when both are present.
    static func decode<Key: CodingKey>(
        from decoder: any Decoder, key: Key,
        in container: KeyedDecodingContainer<Key>
    ) throws -> AudioSession? {
        if let session = try container.decodeIfPresent(AudioSession.self, forKey: key) { return session }
        let legacy = try decoder.container(keyedBy: LegacySessionKey.self)
        return try legacy.decodeIfPresent(SessionCategory.self, forKey: .category).map { AudioSession(category: $0) }
    }
}

/// The one session field items had before `session`.
private enum LegacySessionKey: String, CodingKey { case category }
