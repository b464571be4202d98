/// AVAudioSession's categories, options and modes as `announce` plays them (DESIGN §3).
///
/// Everything here is pure: no I/O, no clock. `SessionPolicy` decides what happens to the
/// streams already playing when one of these sessions activates or deactivates.

/// What kind of audio a stream is; decides whether it mixes, interrupts and obeys quiet mode.
///
/// Only the playing categories exist: `record`, `play-and-record` and `audio-processing`
/// are refused by `init(parsing:)` because announce never opens a microphone.
public enum SessionCategory: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    /// Mixes with everything, interrupts nothing, silenced by quiet mode.
    case ambient
    /// The default: exclusive (main lane), silenced by quiet mode.
    case soloAmbient = "solo-ambient"
    /// Exclusive unless `--mix-with-others`; plays in quiet mode.
    case playback
    /// As playback, written to every `--device` given.
    case multiRoute = "multi-route"

    public static let `default` = SessionCategory.soloAmbient

    public var description: String { rawValue }

    /// ambient and solo-ambient end as `silenced` while quiet mode is on; playback and multi-route play.
    public var silencedByQuietMode: Bool {
        switch self {
        case .ambient, .soloAmbient: true
        case .playback, .multiRoute: false
        }
    }

    /// AVAudioSession categories that need a microphone or do not play, with why.
    private static let refused: [(name: String, why: String)] = [
        ("record", "needs a microphone"),
        ("play-and-record", "needs a microphone; use 'playback'"),
        ("audio-processing", "processes audio offline and plays nothing; use 'playback'")
    ]

    /// A user's spelling: `solo-ambient`, `solo_ambient`, `soloAmbient` and `SOLO-AMBIENT` are all accepted.
    /// Refused categories and unknown names throw `AnnounceError.usage` (exit 64) with one line:
    /// "announce only plays: category 'record' needs a microphone", or
    /// "unknown category 'x'; valid: ambient, solo-ambient, playback, multi-route".
    public init(parsing text: String) throws(AnnounceError) {
        let key = sessionNameKey(text)
        if let match = Self.allCases.first(where: { sessionNameKey($0.rawValue) == key }) {
            self = match
            return
        }
        if let refusal = Self.refused.first(where: { sessionNameKey($0.name) == key }) {
            throw .usage("announce only plays: category '\(refusal.name)' \(refusal.why)")
        }
        throw .usage("unknown category '\(text)'; valid: \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
    }
}

/// A hint about the content, like AVAudioSession's modes; only `spokenAudio` changes the policy
/// (`interruptSpokenAudioAndMixWithOthers` pauses it).
public enum SessionMode: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    case `default`
    /// Podcasts, audiobooks, other speech that should pause rather than be talked over.
    case spokenAudio = "spoken-audio"
    /// Short prompts (navigation, announcements).
    case voicePrompt = "voice-prompt"

    public var description: String { rawValue }

    /// AVAudioSession modes that only make sense with a microphone.
    private static let refused = ["voice-chat", "video-chat", "game-chat", "video-recording", "measurement"]

    /// Same spelling rules and errors as `SessionCategory.init(parsing:)`.
    public init(parsing text: String) throws(AnnounceError) {
        let key = sessionNameKey(text)
        if let match = Self.allCases.first(where: { sessionNameKey($0.rawValue) == key }) {
            self = match
            return
        }
        if let refusal = Self.refused.first(where: { sessionNameKey($0) == key }) {
            throw .usage("announce only plays: mode '\(refusal)' needs a microphone")
        }
        throw .usage("unknown mode '\(text)'; valid: \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
    }
}

/// Lowercased, without `-`, `_` and spaces, so kebab-case, snake_case and camelCase compare equal.
private func sessionNameKey(_ text: String) -> String {
    String(text.lowercased().filter { $0 != "-" && $0 != "_" && $0 != " " })
}

/// AVAudioSession.CategoryOptions that matter when only playing.
///
/// Decoding fills missing keys with the defaults, so spooled items and requests written
/// before a key existed still decode.
public struct SessionOptions: Codable, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `--mix-with-others`: playback and multi-route mix (mixed lane). No effect on ambient (always
    /// mixes) nor solo-ambient (never mixes, as AVAudioSession ignores it there).
    public var mixWithOthers: Bool
    /// `--duck-others`: while this stream plays, every other stream that does not itself duck
    /// others is lowered to the duck level. Honoured in every category (AVAudioSession only
    /// allows it with playback) and, unlike AVAudioSession, it does not imply mixing: a
    /// non-mixable duck-others announcement still waits its turn on the main lane.
    public var duckOthers: Bool
    /// `--interrupt-spoken-audio`: mixes (playback, multi-route; ambient mixes anyway,
    /// solo-ambient never) and pauses the streams whose mode is spoken-audio, in every category.
    public var interruptSpokenAudioAndMixWithOthers: Bool
    /// On by default; `--no-notify-others` turns it off: when this session ends, the streams
    /// it interrupted stay paused until an explicit `announce resume`.
    public var notifyOthersOnDeactivation: Bool

    public init(
        mixWithOthers: Bool = false, duckOthers: Bool = false,
        interruptSpokenAudioAndMixWithOthers: Bool = false, notifyOthersOnDeactivation: Bool = true
    ) {
        self.mixWithOthers = mixWithOthers
        self.duckOthers = duckOthers
        self.interruptSpokenAudioAndMixWithOthers = interruptSpokenAudioAndMixWithOthers
        self.notifyOthersOnDeactivation = notifyOthersOnDeactivation
    }

    private enum CodingKeys: String, CodingKey {
        case mixWithOthers, duckOthers, interruptSpokenAudioAndMixWithOthers, notifyOthersOnDeactivation
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = SessionOptions()
        mixWithOthers = try container.decodeIfPresent(Bool.self, forKey: .mixWithOthers) ?? defaults.mixWithOthers
        duckOthers = try container.decodeIfPresent(Bool.self, forKey: .duckOthers) ?? defaults.duckOthers
        interruptSpokenAudioAndMixWithOthers =
            try container.decodeIfPresent(
                Bool.self, forKey: .interruptSpokenAudioAndMixWithOthers)
            ?? defaults.interruptSpokenAudioAndMixWithOthers
        notifyOthersOnDeactivation =
            try container.decodeIfPresent(Bool.self, forKey: .notifyOthersOnDeactivation)
            ?? defaults.notifyOthersOnDeactivation
    }

    /// The command-line flags that differ from the defaults, e.g. `mix-with-others, no-notify-others`;
    /// empty for the defaults.
    public var description: String {
        var flags: [String] = []
        if mixWithOthers { flags.append("mix-with-others") }
        if duckOthers { flags.append("duck-others") }
        if interruptSpokenAudioAndMixWithOthers { flags.append("interrupt-spoken-audio") }
        if !notifyOthersOnDeactivation { flags.append("no-notify-others") }
        return flags.joined(separator: ", ")
    }
}

/// Where a stream plays (DESIGN §3).
public enum SessionLane: String, Codable, CaseIterable, Sendable {
    /// Exclusive: one stream at a time, in queue order (the scheduler's playing item).
    case main
    /// Starts at once, mixed over whatever plays; never queued, never preempted.
    case mixed
}

/// The session a stream carries: category + options + mode. Codable with defaults for missing keys.
public struct AudioSession: Codable, Equatable, Hashable, Sendable, CustomStringConvertible {
    public var category: SessionCategory
    public var options: SessionOptions
    public var mode: SessionMode

    public static let `default` = AudioSession()

    public init(
        category: SessionCategory = .default, options: SessionOptions = SessionOptions(),
        mode: SessionMode = .default
    ) {
        self.category = category
        self.options = options
        self.mode = mode
    }

    private enum CodingKeys: String, CodingKey { case category, options, mode }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        category = try container.decodeIfPresent(SessionCategory.self, forKey: .category) ?? .default
        options = try container.decodeIfPresent(SessionOptions.self, forKey: .options) ?? SessionOptions()
        mode = try container.decodeIfPresent(SessionMode.self, forKey: .mode) ?? .default
    }

    /// Plays over other streams instead of taking the main lane.
    /// ambient: always. solo-ambient: never (mix options are ignored, as AVAudioSession does).
    /// playback, multi-route: with `mixWithOthers` or `interruptSpokenAudioAndMixWithOthers`.
    /// `duckOthers` alone does not make a session mix.
    public var mixesWithOthers: Bool {
        switch category {
        case .ambient: true
        case .soloAmbient: false
        case .playback, .multiRoute: options.mixWithOthers || options.interruptSpokenAudioAndMixWithOthers
        }
    }

    /// Activating it interrupts the active non-mixable streams: exactly the sessions that do not mix
    /// (DESIGN §3's table gives playback/multi-route "yes" for their default options; with a mix
    /// option they mix, and a mixing session never interrupts a non-mixable one).
    public var interruptsNonMixable: Bool { !mixesWithOthers }

    /// Activating it pauses the active streams whose mode is spoken-audio, whatever their lane.
    public var interruptsSpokenAudio: Bool { options.interruptSpokenAudioAndMixWithOthers }

    public var lane: SessionLane { mixesWithOthers ? .mixed : .main }

    /// One line per option that has no effect in this category, for the client to print as a warning.
    public var warnings: [String] {
        guard category == .soloAmbient else { return [] }
        var lines: [String] = []
        if options.mixWithOthers {
            lines.append(
                "--mix-with-others has no effect with category solo-ambient, which never mixes; use ambient or playback"
            )
        }
        if options.interruptSpokenAudioAndMixWithOthers {
            lines.append("--interrupt-spoken-audio does not make solo-ambient mix; it only pauses spoken audio")
        }
        return lines
    }

    /// `playback (mix-with-others) spoken-audio`: the category, the flags that differ from the
    /// defaults, and the mode unless it is `default`.
    public var description: String {
        var text = category.rawValue
        let flags = options.description
        if !flags.isEmpty { text += " (\(flags))" }
        if mode != .default { text += " \(mode.rawValue)" }
        return text
    }
}
