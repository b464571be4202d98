/// Priority levels, lowest first (DESIGN §2).
public enum Priority: String, Codable, Comparable, CaseIterable, Sendable {
    case low, normal, high, critical

    private var rank: Int {
        switch self {
        case .low: 0
        case .normal: 1
        case .high: 2
        case .critical: 3
        }
    }

    public static func < (a: Priority, b: Priority) -> Bool { a.rank < b.rank }
}

/// What happens to an item when something of higher priority takes over.
public enum InterruptAction: String, Codable, CaseIterable, Sendable {
    case resume, restart, drop
}

/// What to play and how; the scheduler never looks inside.
public struct Clip: Codable, Equatable, Sendable, NamedFile {
    /// Absolute path, resolved by the client; for speech, its label (`Speech.label`); for
    /// media, `Clip.stdinLabel`. When the name is not UTF-8, what messages, events and status
    /// show (`FileName.text`).
    public var path: String
    /// The path's exact bytes when they are not UTF-8 (Linux names are bytes): the file opened.
    /// Absent for every other clip (and in spool entries written before it existed).
    public var pathBytes: FileName?
    /// `announce play -`: the name of a file in the daemon's media directory (`RUNTIME/media`)
    /// that holds the audio instead of `path`. The queue owns it: the daemon deletes it once the
    /// item has its outcome. `Clip.isValidMediaName`.
    public var media: String?
    /// `announce play URL`: the daemon downloads it into media `media` (a name it gives when
    /// it accepts the item) and plays it as it arrives; `path` is the same URL, its label.
    public var url: String?
    /// The caller's proxy variables (`Clip.proxyVariables`) for `url` or `stream`; nil or empty: no proxy.
    public var proxies: [String: String]?
    /// `play --cache` / `--no-cache`: `url`'s body is kept in (and first looked for in) the
    /// download cache; nil: the daemon's config file (`[download] cache`).
    public var cache: Bool?
    /// `announce say`: text the daemon renders with a speech engine, instead of a file.
    public var speech: Speech? {
        get { speechBox?.value }
        set { speechBox = newValue.map(Boxed.init) }
    }
    /// `announce play --stream URL`: live radio the daemon opens when it plays, instead of a file.
    public var stream: LiveStream? {
        get { streamBox?.value }
        set { streamBox = newValue.map(Boxed.init) }
    }
    /// ALSA PCM for this clip; nil plays on the daemon's device.
    public var device: DeviceName?
    /// Category multi-route only: further devices the clip plays on at the same time, after
    /// `device` (or the daemon's device when `device` is nil). At most `Limits.maxDevices` in all.
    public var extraDevices: [DeviceName]?
    /// Linear gain, applied on top of the normalised level.
    public var gain: Float
    public var pan: Float
    /// What its loudness is brought to (`--loudness`); nil: the daemon's config file's.
    public var loudness: LoudnessTarget?
    /// Absolute paths of sounds played before and after it in the same item (`--chime`,
    /// `--chime-after`; the client resolves names and the config's defaults): in no position.
    public var chime: String?
    public var chimeAfter: String?
    /// Extra passes after the first; -1 repeats until stopped.
    public var loops: Int
    /// Where the first pass starts, in seconds.
    public var start: Double?
    /// The caller's sound-server variables (`Clip.environmentVariables`), for opening its devices;
    /// nil: the daemon's own.
    public var environment: [String: String]?
    /// Seconds the whole program lasts, as the client measured it: for the wait others are told.
    /// Wall time: at `rate` 2 half the file's length.
    public var seconds: Double?
    /// Tempo with the pitch kept (`--rate`), `Limits.rate`; nil is 1.
    public var rate: Double?
    /// Pitch shift in semitones with the length kept (`--pitch`), `Limits.pitch`; nil is 0.
    public var pitch: Double?
    /// Leading and trailing silence trimmed, long pauses shortened (`--skip-silence`), by the
    /// daemon's `SilenceRule`; nil is false. `start`, positions and lengths stay in source time.
    public var skipSilence: Bool?
    /// System queue: the audio and chimes the client handed over as descriptors; `path` and
    /// the chimes' paths are then only labels (DESIGN §8).
    public var handed: HandedFiles? {
        get { handedBox?.value }
        set { handedBox = newValue.map(Boxed.init) }
    }
    private var speechBox: Boxed<Speech>?
    private var streamBox: Boxed<LiveStream>?
    private var handedBox: Boxed<HandedFiles>?

    /// Every stored property's key, the boxed ones under their values' names: one left out here
    /// would still compile (an optional) and silently never reach the spool or the wire.
    private enum CodingKeys: String, CodingKey {
        case path, pathBytes, media, url, proxies, cache, device, extraDevices, gain, pan, loudness, chime, chimeAfter,
            loops,
            start, environment, seconds, rate, pitch, skipSilence
        case speechBox = "speech", streamBox = "stream", handedBox = "handed"
    }

    public init(
        path: String, device: DeviceName? = nil, extraDevices: [DeviceName]? = nil, gain: Float = 1, pan: Float = 0,
        loops: Int = 0, start: Double? = nil, environment: [String: String]? = nil, seconds: Double? = nil,
        rate: Double? = nil, pitch: Double? = nil, skipSilence: Bool? = nil, speech: Speech? = nil,
        media: String? = nil, stream: LiveStream? = nil
    ) {
        self.path = path
        self.pathBytes = nil
        self.speechBox = speech.map(Boxed.init)
        self.media = media
        self.streamBox = stream.map(Boxed.init)
        self.device = device
        self.extraDevices = extraDevices
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.start = start
        self.environment = environment
        self.seconds = seconds
        self.rate = rate
        self.pitch = pitch
        self.skipSilence = skipSilence
    }

    /// The sound-server variables a request may carry for opening its devices (docs/protocol.md,
    /// ItemRequest): ALSA's pulse and pipewire plugins read them when they connect.
    public static let environmentVariables = [
        "XDG_RUNTIME_DIR", "PULSE_SERVER", "PULSE_RUNTIME_PATH", "PULSE_COOKIE",
        "PULSE_CLIENTCONFIG", "PULSE_SINK", "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_REMOTE"
    ]

    /// The proxy variables a URL request may carry: libcurl's, which decide its proxy.
    public static let proxyVariables = [
        "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"
    ]

    /// The URL schemes `play` takes; a redirect may lead only to the first two (never from a
    /// server to a local file).
    public static let urlSchemes = ["http", "https", "file"]

    /// The lowercased scheme of an argument written as a URL (`https` of `https://host/x`);
    /// nil for anything else, a path.
    public static func urlScheme(of argument: String) -> String? {
        guard let separator = argument.firstRange(of: "://") else { return nil }
        let scheme = argument[..<separator.lowerBound]
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            scheme.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || "0123456789+.-".unicodeScalars.contains($0))
            })
        else { return nil }
        return scheme.lowercased()
    }

    /// What messages, events and status call audio read from stdin (`Clip.path` of a media clip).
    public static let stdinLabel = "stdin"

    /// A media file's name: 1 to 64 lowercase hex digits, so a name the daemon is sent never
    /// becomes a path outside its media directory (and a temporary `.NAME.tmp` is none).
    public static func isValidMediaName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Seconds of the source as seconds heard, at `rate` (`--skip-silence` only shortens it):
    /// the one rule for the waits others are told.
    public func wallSeconds(forSource seconds: Double) -> Double { seconds / (rate ?? 1) }

    /// Every device the clip plays on, in order: `device` (else `defaultDevice`), then `extraDevices`.
    public func devices(default defaultDevice: DeviceName) -> [DeviceName] {
        [device ?? defaultDevice] + (extraDevices ?? [])
    }
}

/// One accepted announcement: what the spool holds and the scheduler orders.
/// Times are seconds since the Unix epoch on the daemon's clock.
public struct QueueItem: Codable, Equatable, Sendable {
    public var id: ItemID
    /// Arrival order, assigned by the scheduler; FIFO within a priority.
    public var sequence: UInt64
    public var clip: Clip
    public var priority: Priority
    /// False for `--no-interrupt`: waits for the playing item even when it outranks it.
    public var interrupts: Bool
    public var onInterrupt: InterruptAction
    /// Heard fraction at or past which a preempted item is dropped.
    public var dropAfter: Double
    public var tag: String?
    public var arrival: Double
    /// `--at` / `--delay`: not eligible before this time.
    public var eligibleAt: Double?
    /// `--expire`: seconds from eligibility (arrival when not scheduled) within which it must start.
    public var expireAfter: Double?
    /// `--category`, `--mode` and the session options; nil is `AudioSession.default`. Items spooled
    /// with only a `"category"` decode into a session of that category, those spooled before
    /// categories existed into nil.
    public var session: AudioSession?
    /// `--duck-level` in dB (-60 to 0) for a duck-others item; nil is the daemon's configured level.
    public var duckLevel: Double?
    /// `--if-busy`; nil is `wait`.
    public var ifBusy: IfBusy?
    /// `--if-other-audio`; nil is `play`.
    public var ifOtherAudio: IfOtherAudio?

    /// Frames of the whole program (every pass, from the start offset) heard so far: the resume point.
    public var heardFrames: Int64 = 0
    /// Length of the program in frames, once known; nil when unknown or looping forever.
    public var totalFrames: Int64?
    /// How much was heard in units of the source's own, when it counts so (speech: whole
    /// sentences, `Source.heardFraction`); else the drop-after rule divides the frames.
    public var heardFraction: Double?
    /// It has played at least once, so it can no longer expire.
    public var started = false
    /// The scheduler sent it back to the queue (preempted, paused, held): it resumes first in its
    /// class (Scheduler+Keys). The scheduler's ordering fact, set as it requeues and cleared as it
    /// plays; spooled, so after a restart the order holds and the item's `ItemLifecycle` begins
    /// interrupted. Whether clients hear of it as interrupted is the lifecycle's alone.
    public var interrupted = false
    /// The key of the play request that queued it (`PlayRequest.key`), if its client gave one.
    public var requestKey: String?
    /// System queue: who queued it (DESIGN §8); nil on a user's own daemon.
    public var owner: ItemOwner?

    public init(
        id: ItemID, sequence: UInt64 = 0, clip: Clip, priority: Priority = .default,
        interrupts: Bool = QueueItem.defaultInterrupts,
        onInterrupt: InterruptAction = .default, dropAfter: Double = QueueItem.defaultDropAfter, tag: String? = nil,
        arrival: Double, eligibleAt: Double? = nil, expireAfter: Double? = nil, session: AudioSession? = nil,
        duckLevel: Double? = nil, ifBusy: IfBusy? = nil, ifOtherAudio: IfOtherAudio? = nil
    ) {
        self.id = id
        self.sequence = sequence
        self.clip = clip
        self.priority = priority
        self.interrupts = interrupts
        self.onInterrupt = onInterrupt
        self.dropAfter = dropAfter
        self.tag = tag
        self.arrival = arrival
        self.eligibleAt = eligibleAt
        self.expireAfter = expireAfter
        self.session = session
        self.duckLevel = duckLevel
        self.ifBusy = ifBusy
        self.ifOtherAudio = ifOtherAudio
    }

    /// The session it plays in, defaults applied (DESIGN §3).
    public var audioSession: AudioSession { session ?? .default }

    /// The session category it plays in (DESIGN §3).
    public var sessionCategory: SessionCategory { audioSession.category }

    /// The session's category (nil when no session is given); setting it keeps the other session fields.
    public var category: SessionCategory? {
        get { session?.category }
        set { session = AudioSession.replacingCategory(of: session, with: newValue) }
    }

    /// When it stops being able to start, if ever.
    public var expiresAt: Double? { expireAfter.map { max(arrival, eligibleAt ?? arrival) + $0 } }

    private enum CodingKeys: String, CodingKey {
        case id, sequence, clip, priority, interrupts, onInterrupt, dropAfter, tag, arrival, eligibleAt, expireAfter
        case session, duckLevel, ifBusy, ifOtherAudio, heardFrames, totalFrames, heardFraction, started, interrupted,
            requestKey, owner
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ItemID.self, forKey: .id)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        clip = try container.decode(Clip.self, forKey: .clip)
        priority = try container.decode(Priority.self, forKey: .priority)
        interrupts = try container.decode(Bool.self, forKey: .interrupts)
        onInterrupt = try container.decode(InterruptAction.self, forKey: .onInterrupt)
        dropAfter = try container.decode(Double.self, forKey: .dropAfter)
        tag = try container.decodeIfPresent(String.self, forKey: .tag)
        arrival = try container.decode(Double.self, forKey: .arrival)
        eligibleAt = try container.decodeIfPresent(Double.self, forKey: .eligibleAt)
        expireAfter = try container.decodeIfPresent(Double.self, forKey: .expireAfter)
        session = try AudioSession.decode(from: decoder, key: .session, in: container)
        duckLevel = try container.decodeIfPresent(Double.self, forKey: .duckLevel)
        ifBusy = try container.decodeIfPresent(IfBusy.self, forKey: .ifBusy)
        ifOtherAudio = try container.decodeIfPresent(IfOtherAudio.self, forKey: .ifOtherAudio)
        heardFrames = try container.decode(Int64.self, forKey: .heardFrames)
        totalFrames = try container.decodeIfPresent(Int64.self, forKey: .totalFrames)
        heardFraction = try container.decodeIfPresent(Double.self, forKey: .heardFraction)
        started = try container.decode(Bool.self, forKey: .started)
        interrupted = try container.decode(Bool.self, forKey: .interrupted)
        requestKey = try container.decodeIfPresent(String.self, forKey: .requestKey)
        owner = try container.decodeIfPresent(ItemOwner.self, forKey: .owner)
    }
}

/// Final outcomes; each is reported once (DESIGN §2).
public enum OutcomeKind: String, Codable, CaseIterable, Sendable {
    case played, dropped, cancelled, replaced, expired, silenced, failed
}

public struct Outcome: Codable, Equatable, Sendable {
    public var kind: OutcomeKind
    /// Why, in a few words ("preempted by 7f3a after 85% heard", "skipped").
    public var reason: String?
    /// For `failed`: the exit status the error maps to (65, 66, 69, 70).
    public var code: Int32?

    public init(_ kind: OutcomeKind, reason: String? = nil, code: Int32? = nil) {
        self.kind = kind
        self.reason = reason
        self.code = code
    }

    /// The client's exit status for this outcome (DESIGN §1).
    public var exitCode: Int32 {
        switch kind {
        case .played: 0
        case .failed: code ?? AnnounceError.internalExitCode
        default: Self.notPlayedExitCode
        }
    }

    /// Not played to the end (dropped, cancelled, replaced, expired, silenced), or for
    /// `cancel` an id that was unknown or already final (75).
    public static let notPlayedExitCode: Int32 = 75

    // The outcomes said the same way wherever they are given.
    public static let played = Outcome(.played)
    /// `cancel`, a tag's replace in the mixing lane, a client that left before its commit.
    public static let cancelled = Outcome(.cancelled, reason: "cancelled")
    /// `stop`: the queue emptied.
    public static let stopped = Outcome(.cancelled, reason: "stopped")
    public static let quietMode = Outcome(.silenced, reason: "quiet mode")
    /// A host whose daemon gave no outcome for an item it took (zones).
    public static let none = Outcome(.failed, reason: "no outcome", code: AnnounceError.internalExitCode)
}

/// Why the scheduler asks for the current item to stop.
public enum StopReason: Equatable, Sendable {
    case preempted(by: ItemID)
    case paused
    /// The queue is held for this reason (device busy or lost, a session interruption).
    case held(QueueHold)
    case skipped
    case cancelled
    case replaced(by: ItemID)
    case stopped
}

/// How a play of the current item ended, as the daemon saw it.
public enum PlaybackEnd: Equatable, Sendable {
    /// Played to the end of the program.
    case finished
    /// Stopped on request (a `stopPlayback` effect).
    case stopped
    /// Could not play: the error's exit code and one-line message.
    case failed(code: Int32, message: String)
    /// Not played at all: quiet mode silenced it when it was due to start (outcome `silenced`).
    case silenced(reason: String)
    /// Could not go on for a reason outside the queue (the device is busy or went away): it
    /// goes back to the head of its class with what was heard, and the queue is held for `reason`.
    case held(QueueHold)
}
