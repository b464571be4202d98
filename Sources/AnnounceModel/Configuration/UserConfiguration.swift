/// The user's config file: `$XDG_CONFIG_HOME/announce/config`, else `~/.config/announce/config`.
///
/// ```
/// # announce
/// device = plughw:0
/// loudness = -16
/// duck-level = -12dB
/// quiet-hours = 22:00-07:00
/// quiet-hours = 12:30-13:30
/// quiet-level = -15dB
/// wake-up = 300ms
/// keep-open = 10s
/// silence-gap = 300ms
/// silence-level = -50dB
/// connect-timeout = 10s
/// stall-timeout = 30s
/// reconnect-limit = 1m
///
/// [chime]
/// high = chime
/// critical = attention
///
/// [speech]
/// engine = piper
/// voice = en_US-joe-medium
/// cache-size = 64MB
/// ```
///
/// One `key = value` per line; `#` starts a comment (a whole line, or after a space); blank
/// lines are ignored. Keys: `device` (the daemon's device when `announce daemon` has no
/// `--device`), `loudness` (what every play's loudness is brought to: LUFS from -40 to -5, or
/// off; `LoudnessTarget`), `duck-level` (dB, -60 to 0), `quiet-hours` (repeatable; a line may also list
/// several windows separated by commas), `quiet-level` (`silent`, the default, or a night level
/// in dB, -60 to -1, that quiet mode plays its items at instead; `QuietLevel`), `wake-up` (0 to
/// 5 s of silence written before the first item when the device opens, for a sink that sleeps), `keep-open`
/// (how long the device stays open after the queue empties: the default 100 ms writes nothing;
/// longer, up to 1h, plays silence at most a period ahead, so back-to-back items do not wake the
/// sink twice), `silence-gap` (the longest pause `--skip-silence`
/// leaves, 50ms to 10s) and `silence-level` (below it a frame is silence, -90 to -20 dB; both
/// `SilenceRule`), `connect-timeout` and `stall-timeout` (`play URL`'s downloads: how long connecting,
/// and a transfer receiving nothing, may take; 1s to 10m; live streams use them too), and
/// `reconnect-limit` (how long a live stream that dropped is tried again before it fails, 1s
/// to 1h; `ReconnectBackoff`). A later value of any key but `quiet-hours` replaces an earlier one. A `[chime]`
/// line starts the default `--chime` of each priority (`low`, `normal`, `high`, `critical`: a
/// sound's name or a file), a `[speech]` line the keys of `announce say`: `engine`, `voice` and `cache-size` (the render
/// cache's limit: bytes, or with K, M or G; 0 turns it off). `[mqtt]`: zones over a broker
/// (`MQTTSettings`). Unknown keys and bad values are skipped, each with one warning
/// `CONFIG:LINE: reason`; nothing in the file is ever fatal. A missing file means the defaults.
/// Each key is one row of `ConfigKey.all` (its section, parser and bounds); parsing lives here,
/// reading the file in AnnounceSystem (UserConfiguration+File).
public struct UserConfiguration: Equatable, Sendable {
    public var device: DeviceName?
    /// `loudness`: what a play's loudness is brought to when it does not say.
    public var loudness = LoudnessTarget.standard
    /// The level other streams are ducked to, in dB (negative).
    public var duckLevel: Double
    public var quietHours: [QuietHours]
    /// `quiet-level`: what quiet mode does to what it applies to.
    public var quietLevel = QuietLevel.silent
    /// `wake-up`, seconds: silence written before the first item when the device opens.
    public var wakeUp = 0.0
    /// `keep-open`, seconds: how long the device stays open after the queue empties.
    public var keepOpen = UserConfiguration.defaultKeepOpen
    /// `[chime]`: the sound (a name, or a file) played before an item of each priority that
    /// gives no `--chime`; none without the section.
    public var chimes: [Priority: String] = [:]
    /// What `--skip-silence` cuts.
    public var silence: SilenceRule
    /// `connect-timeout`, seconds: `play URL` gives up connecting after it (DNS included).
    public var connectTimeout = UserConfiguration.defaultConnectTimeout
    /// `stall-timeout`, seconds: `play URL` gives up a download that receives nothing for this long.
    public var stallTimeout = UserConfiguration.defaultStallTimeout
    /// `reconnect-limit`, seconds: a live stream that dropped is given up after trying this long.
    public var reconnectLimit = UserConfiguration.defaultReconnectLimit
    /// `[speech] engine`: `say`'s engine when it has no --engine.
    public var speechEngine: SpeechEngine?
    /// `[speech] voice`: `say`'s voice when it has no --voice.
    public var speechVoice: String?
    /// `[speech] cache-size`: bytes of rendered speech kept.
    public var speechCacheBytes: Int64 = UserConfiguration.defaultSpeechCacheBytes

    /// `[download] cache`: URLs are kept in the download cache unless `play --no-cache`.
    public var cacheDownloads = false
    /// `[session] interrupting-roles`: media.role values of other applications' streams that
    /// interrupt announce like a call (`OtherAudioScene`); `none` leaves it empty.
    public var interruptingRoles = OtherAudioScene.defaultInterruptingRoles

    /// `[download] cache-size`: bytes of downloads kept.
    public var downloadCacheBytes: Int64 = UserConfiguration.defaultDownloadCacheBytes
    /// `[mqtt]`: the broker of this host's zones; nil: zones are off.
    public var mqtt: MQTTSettings?
    /// `[system]`: the system daemon's rules for its callers (DESIGN §8); other daemons ignore it.
    public var system = SystemSettings()

    public static let defaultSpeechCacheBytes: Int64 = 64 << 20
    public static let defaultDownloadCacheBytes: Int64 = 256 << 20
    public static let defaultConnectTimeout = 10.0
    public static let defaultStallTimeout = 30.0
    /// What `connect-timeout` and `stall-timeout` may be, in seconds.
    public static let downloadTimeoutRange = 1.0...600.0
    public static let defaultReconnectLimit = 60.0
    /// What `reconnect-limit` may be, in seconds.
    public static let reconnectLimitRange = 1.0...3600.0

    public static let defaultDuckLevel = -12.0
    /// `keep-open`: a short close grace that writes nothing.
    public static let defaultKeepOpen = 0.1
    /// The daemon's device when neither `--device` nor the file names one: ALSA's default PCM.
    public static let defaultDevice: DeviceName = "default"
    public static let duckLevelRange = -60.0...0.0
    /// What a duck level must be, for the messages of the config file and `--duck-level`.
    public static let duckLevelRule = ConfigKey.levelRule(duckLevelRange, like: defaultDuckLevel)

    public init(
        device: DeviceName? = nil, duckLevel: Double = UserConfiguration.defaultDuckLevel,
        quietHours: [QuietHours] = [],
        silence: SilenceRule = .default
    ) {
        self.device = device
        self.duckLevel = duckLevel
        self.quietHours = quietHours
        self.silence = silence
    }

    /// Parses config text; `name` prefixes each warning (`name:LINE: reason`).
    /// Most warnings one reading of the file gives.
    static let maxWarnings = 10

    /// A line or key as a warning quotes it: at most 40 characters.
    private static func shown(_ text: String) -> String { text.count > 40 ? text.prefix(40) + "…" : text }

    public static func parse(_ text: String, name: String) -> (configuration: UserConfiguration, warnings: [String]) {
        var draft = ConfigDraft()
        var warnings: [String] = []
        // "\r\n" is one Character, so splitting on "\n" alone would leave a CRLF file one line.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        var section = ""
        var mqttLine = 0
        for (index, rawLine) in lines.enumerated() {
            func warn(_ reason: String) { warnings.append("\(name):\(index + 1): \(reason)") }
            let line = withoutComment(String(rawLine)).trimming(" \t\r")
            if line.isEmpty { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast()).trimming(" \t").lowercased()
                if !ConfigKey.sections.contains(section) { warn(ConfigKey.unknownSection(section)) }
                if section == "mqtt" && !draft.mqtt.seen {
                    draft.mqtt.seen = true
                    mqttLine = index + 1
                }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                warn("expected 'key = value', not '\(shown(line))'")
                continue
            }
            let key = String(line[..<equals]).trimming(" \t").lowercased()
            let value = String(line[line.index(after: equals)...]).trimming(" \t")
            if value.isEmpty {
                warn("'\(key)' has no value")
                continue
            }
            // An unknown section's keys: warned once, at its header.
            guard ConfigKey.sections.contains(section) else { continue }
            guard let known = ConfigKey.key(key, in: section) else {
                warn(ConfigKey.unknown(shown(key), in: section))
                continue
            }
            known.take(value, &draft, warn)
        }
        var configuration = draft.configuration
        configuration.mqtt = draft.mqtt.finish { warnings.append("\(name):\(mqttLine): \($0)") }
        // Not a config file at all (a binary, a script): a few short lines say so, not one a line.
        if warnings.count > maxWarnings {
            let more = warnings.count - (maxWarnings - 1)
            warnings =
                warnings.prefix(maxWarnings - 1) + ["\(name): \(more) more problems; is it announce's config file?"]
        }
        return (configuration, warnings)
    }

    /// `1048576`, `512K`, `64MB`, `1 GiB`: bytes (powers of 1024).
    static func parseBytes(_ text: String) -> Int64? {
        var number = text.lowercased().trimming(" \t")
        for suffix in ["ib", "b"] where number.hasSuffix(suffix) {
            number = String(number.dropLast(suffix.count))
            break
        }
        var scale: Int64 = 1
        if let unit = number.last, let power = ["k": 10, "m": 20, "g": 30][unit] {
            scale = 1 << power
            number = String(number.dropLast())
        }
        number = number.trimming(" \t")
        guard !number.isEmpty, number.allSatisfy(\.isASCII), let value = Int64(number), value >= 0,
            value <= Int64.max / scale
        else { return nil }
        return value * scale
    }

    /// `-12dB`, `-12 dB`, `-12db`, `-12`: a finite level within `duckLevelRange`.
    public static func parseDecibels(_ text: String) -> Double? {
        guard let value = parseAnyDecibels(text), duckLevelRange.contains(value) else { return nil }
        return value
    }

    /// The same spellings, any finite level (so a caller can say why one is out of range).
    public static func parseAnyDecibels(_ text: String) -> Double? {
        var number = text.trimming(" \t")
        if number.lowercased().hasSuffix("db") { number = String(number.dropLast(2)).trimming(" \t") }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.".contains($0)) }),
            let value = Double(number), value.isFinite
        else { return nil }
        return value
    }

    /// The line up to a `#` that starts it or follows a space or tab.
    private static func withoutComment(_ line: String) -> String {
        var previous: Character = " "
        for index in line.indices {
            if line[index] == "#" && (previous == " " || previous == "\t") { return String(line[..<index]) }
            previous = line[index]
        }
        return line
    }
}
