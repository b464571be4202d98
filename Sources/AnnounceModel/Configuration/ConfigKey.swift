/// One key of the config file: its section ("" before any), its name, and how a value is taken
/// into the file's draft, with the rule it is held to (ranges from `Limits` and
/// `UserConfiguration`). The parser, its warnings and the known-key lists all read `all`.
struct ConfigKey: Sendable {
    let section: String
    let name: String
    /// Takes `value` into the draft, or says why it cannot (a warning each).
    let take: @Sendable (_ value: String, _ draft: inout ConfigDraft, _ warn: (String) -> Void) -> Void

    /// Every key, in the order the warnings list them.
    static let all: [ConfigKey] = [
        ConfigKey(section: "", name: "device") { value, draft, warn in
            guard value.utf8.count <= Limits.maxDeviceNameBytes else {
                return warn("device name is longer than \(Limits.maxDeviceNameBytes) bytes")
            }
            draft.configuration.device = DeviceName(value)
        },
        ConfigKey(section: "", name: "loudness") { value, draft, warn in
            guard let target = LoudnessTarget(parsing: value) else {
                return warn("loudness must be \(LoudnessTarget.rule), not '\(value)'")
            }
            draft.configuration.loudness = target
        },
        level("duck-level", UserConfiguration.duckLevelRange, like: UserConfiguration.defaultDuckLevel, \.duckLevel),
        ConfigKey(section: "", name: "quiet-hours") { value, draft, warn in
            for window in value.split(separator: ",") {
                do throws(AnnounceError) {
                    let hours = try QuietHours(parsing: String(window))
                    if !draft.configuration.quietHours.contains(hours) { draft.configuration.quietHours.append(hours) }
                } catch {
                    warn(error.description)
                }
            }
        },
        ConfigKey(section: "", name: "quiet-level") { value, draft, warn in
            guard let level = QuietLevel(parsing: value) else {
                return warn("quiet-level must be silent or \(levelRule(QuietLevel.range, like: -15)), not '\(value)'")
            }
            draft.configuration.quietLevel = level
        },
        time("wake-up", "a time", Limits.wakeUp, like: 0.3, \.wakeUp),
        time("keep-open", "a time", Limits.keepOpen, like: 10, \.keepOpen),
        time("silence-gap", "a pause", Limits.silenceGap, like: SilenceRule.default.gap, \.silence.gap),
        level("silence-level", Limits.silenceLevel, like: SilenceRule.default.level, \.silence.level),
        time(
            "connect-timeout", "a time", UserConfiguration.downloadTimeoutRange,
            like: UserConfiguration.defaultStallTimeout, \.connectTimeout),
        time(
            "stall-timeout", "a time", UserConfiguration.downloadTimeoutRange,
            like: UserConfiguration.defaultStallTimeout, \.stallTimeout),
        time(
            "reconnect-limit", "a time", UserConfiguration.reconnectLimitRange,
            like: UserConfiguration.defaultReconnectLimit,
            \.reconnectLimit),

        chime(.low), chime(.normal), chime(.high), chime(.critical),

        ConfigKey(section: "speech", name: "engine") { value, draft, warn in
            guard let engine = SpeechEngine(rawValue: value) else {
                return warn(
                    "engine must be one of \(SpeechEngine.allCases.map(\.rawValue).joined(separator: ", ")), not '\(value)'"
                )
            }
            draft.configuration.speechEngine = engine
        },
        ConfigKey(section: "speech", name: "voice") { value, draft, warn in
            if let problem = Speech.nameProblem(value) { return warn("voice \(problem)") }
            draft.configuration.speechVoice = value
        },
        size("speech", UserConfiguration.defaultSpeechCacheBytes, \.speechCacheBytes),

        flag("download", "cache") { $0.configuration.cacheDownloads = $1 },
        size("download", UserConfiguration.defaultDownloadCacheBytes, \.downloadCacheBytes),

        ConfigKey(section: "session", name: "interrupting-roles") { value, draft, warn in
            let roles = value.split(separator: ",", omittingEmptySubsequences: false).map {
                String($0).trimming(" \t").lowercased()
            }
            if roles == ["none"] {
                draft.configuration.interruptingRoles = []
                return
            }
            guard !roles.isEmpty,
                roles.allSatisfy({
                    !$0.isEmpty && $0.utf8.count <= 63 && $0.allSatisfy { $0.isASCII && !$0.isWhitespace }
                })
            else {
                return warn(
                    "interrupting-roles must be media roles separated by commas, like phone, communication, or none; not '\(value)'"
                )
            }
            draft.configuration.interruptingRoles = roles
        },

        ConfigKey(section: "mqtt", name: "broker") { value, draft, warn in
            guard let broker = MQTTSettings.Broker(parsing: value) else {
                return warn("broker must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT], not '\(value)'")
            }
            draft.mqtt.broker = broker
        },
        ConfigKey(section: "mqtt", name: "host") { value, draft, warn in
            if let problem = ZoneName.problem(value, kind: "host") { return warn("host: \(problem)") }
            draft.mqtt.settings.host = value
        },
        ConfigKey(section: "mqtt", name: "zones") { value, draft, warn in
            var zones: [String] = []
            for zone in value.split(separator: ",").map({ String($0).trimming(" \t") }) where !zone.isEmpty {
                if let problem = ZoneName.problem(zone, kind: "zone") { return warn("zones: \(problem)") }
                if !zones.contains(zone) { zones.append(zone) }
            }
            draft.mqtt.settings.zones = zones
        },
        ConfigKey(section: "mqtt", name: "username") { value, draft, warn in
            draft.mqtt.settings.username = value
        },
        ConfigKey(section: "mqtt", name: "password") { value, draft, warn in
            draft.mqtt.settings.password = value
        },
        path("password-file", \.passwordFile), path("ca-file", \.caFile), path("cert-file", \.certFile),
        path("key-file", \.keyFile),
        flag("mqtt", "discovery") { $0.mqtt.settings.discovery = $1 },

        ConfigKey(section: "system", name: "max-items-per-user") { value, draft, warn in
            let range = SystemSettings.itemsRange
            guard let count = Int(value), range.contains(count) else {
                return warn(
                    "max-items-per-user must be a number of items from \(range.lowerBound) to \(range.upperBound), not '\(value)'"
                )
            }
            draft.configuration.system.maxItemsPerUser = count
        },
        ConfigKey(section: "system", name: "max-bytes-per-user") { value, draft, warn in
            guard let bytes = UserConfiguration.parseBytes(value), bytes > 0 else {
                return warn("max-bytes-per-user must be a size like 1G, not '\(value)'")
            }
            draft.configuration.system.maxBytesPerUser = bytes
        },
        ConfigKey(section: "system", name: "devices") { value, draft, warn in
            let names = value.split(separator: ",").map { DeviceName(String($0).trimming(" \t")) }
                .filter { !$0.rawValue.isEmpty }
            if let bad = names.first(where: { $0.problem() != nil }) {
                return warn("devices: '\(bad)' is no device name")
            }
            draft.configuration.system.devices = names
        },
        ConfigKey(section: "system", name: "control-group") { value, draft, warn in
            guard value.utf8.count <= 64, value.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ":" }) else {
                return warn("control-group must be a group's name, not '\(value)'")
            }
            draft.configuration.system.controlGroup = value
        },
        ConfigKey(section: "system", name: "listener") { value, draft, warn in
            guard value.utf8.count <= 64, value.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ":" }) else {
                return warn("listener must be a user's name, not '\(value)'")
            }
            draft.configuration.system.listener = value
        }
    ]

    /// The sections, in order ("" first).
    static let sections: [String] = all.reduce(into: []) { if !$0.contains($1.section) { $0.append($1.section) } }

    static func key(_ name: String, in section: String) -> ConfigKey? {
        all.first { $0.section == section && $0.name == name }
    }

    /// The warning for a key `section` does not have.
    static func unknown(_ name: String, in section: String) -> String {
        let known = all.filter { $0.section == section }.map(\.name).joined(separator: ", ")
        return "unknown key '\(name)'\(section.isEmpty ? "" : " in [\(section)]") (known: \(known))"
    }

    /// The warning for an unknown section.
    static func unknownSection(_ name: String) -> String {
        "unknown section [\(name)] (known: \(sections.filter { !$0.isEmpty }.map { "[\($0)]" }.joined(separator: ", ")))"
    }

    // MARK: kinds of value

    /// A duration within `range`: `noun` says what it is in the warning.
    private static func time(
        _ name: String, _ noun: String, _ range: ClosedRange<Double>, like example: Double,
        _ field: WritableKeyPath<UserConfiguration, Double> & Sendable
    ) -> ConfigKey {
        ConfigKey(section: "", name: name) { value, draft, warn in
            guard let seconds = TimeSpan(parsing: value)?.seconds, range.contains(seconds) else {
                return warn(
                    "\(name) must be \(noun) of \(spoken(range.lowerBound)) to \(spoken(range.upperBound)), like \(spoken(example)), not '\(value)'"
                )
            }
            draft.configuration[keyPath: field] = seconds
        }
    }

    /// A level in dB within `range`.
    private static func level(
        _ name: String, _ range: ClosedRange<Double>, like example: Double,
        _ field: WritableKeyPath<UserConfiguration, Double> & Sendable
    ) -> ConfigKey {
        ConfigKey(section: "", name: name) { value, draft, warn in
            guard let level = UserConfiguration.parseAnyDecibels(value), range.contains(level) else {
                return warn("\(name) must be \(levelRule(range, like: example)), not '\(value)'")
            }
            draft.configuration[keyPath: field] = level
        }
    }

    /// What a level must be, in a warning's or an option's words.
    static func levelRule(_ range: ClosedRange<Double>, like example: Double) -> String {
        "a level in dB from \(Int(range.lowerBound)) to \(Int(range.upperBound)), like \(Int(example))dB"
    }

    /// `[chime]`: the default chime of items of one priority, a sound's name or a file.
    private static func chime(_ priority: Priority) -> ConfigKey {
        ConfigKey(section: "chime", name: priority.rawValue) { value, draft, warn in
            guard !value.isEmpty, value.utf8.count <= Limits.maxPathBytes, !value.utf8.contains(0) else {
                return warn("\(priority.rawValue) must be a sound's name or a file, not '\(value)'")
            }
            draft.configuration.chimes[priority] = value
        }
    }

    /// `cache-size`: bytes, K, M or G; 0 keeps none.
    private static func size(
        _ section: String, _ example: Int64,
        _ field: WritableKeyPath<UserConfiguration, Int64> & Sendable
    ) -> ConfigKey {
        ConfigKey(section: section, name: "cache-size") { value, draft, warn in
            guard let bytes = UserConfiguration.parseBytes(value) else {
                return warn("cache-size must be a size like \(example >> 20)MB or 0, not '\(value)'")
            }
            draft.configuration[keyPath: field] = bytes
        }
    }

    /// yes or no (true, on; false, off).
    private static func flag(
        _ section: String, _ name: String, _ set: @escaping @Sendable (inout ConfigDraft, Bool) -> Void
    ) -> ConfigKey {
        ConfigKey(section: section, name: name) { value, draft, warn in
            switch value.lowercased() {
            case "yes", "true", "on": set(&draft, true)
            case "no", "false", "off": set(&draft, false)
            default: return warn("\(name) must be yes or no, not '\(value)'")
            }
        }
    }

    /// An `[mqtt]` file: absolute, or under `~/`.
    private static func path(_ name: String, _ field: WritableKeyPath<MQTTSettings, String?> & Sendable) -> ConfigKey {
        ConfigKey(section: "mqtt", name: name) { value, draft, warn in
            guard value.hasPrefix("/") || value.hasPrefix("~/") else {
                return warn("\(name) must be an absolute path, not '\(value)'")
            }
            draft.mqtt.settings[keyPath: field] = value
        }
    }

    /// 0.05 → 50ms, 10 → 10s, 600 → 10m, 3600 → 1h.
    static func spoken(_ seconds: Double) -> String {
        if seconds < 1 { return "\(Int((seconds * 1000).rounded()))ms" }
        let whole = Int(seconds.rounded())
        if whole % 3600 == 0 { return "\(whole / 3600)h" }
        if whole % 60 == 0 { return "\(whole / 60)m" }
        return "\(whole)s"
    }
}

/// What the config file has said so far.
struct ConfigDraft {
    var configuration = UserConfiguration()
    var mqtt = MQTTSettings.Draft()
}
