/// Quiet mode, the silent switch (DESIGN §3): pure rules, no I/O and no clock of its own.
///
/// Two sources decide whether it is quiet at a moment:
/// - the manual setting (`announce quiet on|off|until HH:MM`), kept by the daemon in its
///   runtime directory, and
/// - quiet hours from the config file (`quiet-hours = 22:00-07:00`, several allowed).
///
/// How they combine:
/// - `on`: quiet, until changed.
/// - `until T`: quiet before T; from T on the setting has lapsed and the hours apply again.
/// - `off` (set at time S): not quiet, even inside quiet hours, until the next quiet-hours
///   window *starts* after S; from then on the hours apply again. So `quiet off` at 23:00
///   inside `22:00-07:00` means sound now and all night, but tomorrow's 22:00 window is quiet.
///   A window starting exactly at the minute `off` was given does not end it (the user just
///   said "sound, please"). Without quiet hours, `off` never lapses and equals no setting.
/// - no setting: follow the hours.
public struct QuietMode: Sendable {
    /// Minutes since local midnight (0 to 1439) at a time in seconds since the epoch.
    public typealias LocalMinutes = @Sendable (Double) -> Int

    public var setting: QuietSetting?
    public var hours: [QuietHours]
    /// What quiet mode does to what it applies to: silences it, or plays it lower (`quiet-level`).
    public var level: QuietLevel
    public var localMinutes: LocalMinutes

    public init(
        setting: QuietSetting? = nil, hours: [QuietHours] = [], level: QuietLevel = .silent,
        localMinutes: @escaping LocalMinutes
    ) {
        self.setting = setting
        self.hours = hours
        self.level = level
        self.localMinutes = localMinutes
    }

    /// What quiet mode does now to an item it applies to (ambient, solo-ambient, an alert
    /// without --ignore-quiet): nil, nothing (it is not on); else `level`.
    public func treatment(at now: Double) -> QuietLevel? { isQuiet(at: now) ? level : nil }

    /// Quiet mode is in effect at `now`.
    public func isQuiet(at now: Double) -> Bool { state(at: now).quiet }

    /// The manual setting if it still counts at `now`: nil once `until` has passed or a
    /// quiet-hours window has started since `off`.
    public func activeSetting(at now: Double) -> QuietSetting? {
        switch setting {
        case nil: return nil
        case .on: return .on
        case .until(let end): return now < end ? setting : nil
        case .off(let since): return windowStarted(after: since, upTo: now) ? nil : setting
        }
    }

    /// The quiet-hours window covering `now`, if any.
    public func window(at now: Double) -> QuietHours? {
        let minute = localMinutes(now)
        return hours.first { $0.contains(minute: minute) }
    }

    /// Whether it is quiet at `now`, and why, for `status` and `announce quiet`.
    public func state(at now: Double) -> QuietState {
        let active = activeSetting(at: now)
        let inWindow = window(at: now)
        let quiet: Bool
        let reason: String
        switch active {
        case .on?:
            quiet = true
            reason = "announce quiet on"
        case .until?:
            quiet = true
            reason = "announce quiet until"
        case .off?:
            quiet = false
            reason = inWindow.map { "announce quiet off, overriding quiet hours \($0)" } ?? "announce quiet off"
        case nil:
            quiet = inWindow != nil
            reason = inWindow.map { "quiet hours \($0)" } ?? (hours.isEmpty ? "no quiet hours" : "outside quiet hours")
        }
        var until: Double?
        if case .until(let end)? = active { until = end }
        return QuietState(quiet: quiet, setting: active?.kind, until: until, hours: hours, reason: reason, level: level)
    }

    /// A quiet-hours window started in (since, now], on the local clock.
    private func windowStarted(after since: Double, upTo now: Double) -> Bool {
        guard !hours.isEmpty, now > since else { return false }
        // A whole day went by: every window has started again.
        if now - since >= 86_400 { return true }
        let elapsed = now - since
        let from = localMinutes(since)
        // How far the local clock moved; the elapsed time settles a wrap to the same minute
        // (2 h of slack for a daylight-saving change).
        var advanced = (localMinutes(now) - from + 1440) % 1440
        if Double(advanced) * 60 + 7200 < elapsed { advanced += 1440 }
        return hours.contains { window in
            // A window starting at `from` itself starts again a day later.
            let distance = (window.start - from + 1440) % 1440
            return (distance == 0 ? 1440 : distance) <= advanced
        }
    }
}

/// The manual switch as the daemon keeps it (runtime dir, `quiet`), times in seconds since the epoch.
/// JSON: `{"state":"on"}`, `{"state":"off","since":T}`, `{"state":"until","until":T}`.
public enum QuietSetting: Codable, Equatable, Sendable {
    case on
    /// Sound even in quiet hours, until the next window starts after `since` (when it was given).
    case off(since: Double)
    /// Quiet before this time.
    case until(Double)

    public var kind: QuietSwitch {
        switch self {
        case .on: .on
        case .off: .off
        case .until: .until
        }
    }

    private enum CodingKeys: String, CodingKey { case state, since, until }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Readers show these times as local time through time_t (Int64), which traps on a value it cannot
        // hold (`until: 1e300` in a damaged file): such a file has no setting.
        func time(_ key: CodingKeys) throws -> Double {
            let value = try container.decode(Double.self, forKey: key)
            guard Int64(exactly: value.rounded(.down)) != nil else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "\(value) is not a time")
            }
            return value
        }
        switch try container.decode(QuietSwitch.self, forKey: .state) {
        case .on: self = .on
        case .off: self = .off(since: container.contains(.since) ? try time(.since) : 0)
        case .until: self = .until(try time(.until))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .state)
        switch self {
        case .on: break
        case .off(let since): try container.encode(since, forKey: .since)
        case .until(let end): try container.encode(end, forKey: .until)
        }
    }
}

/// The three positions of the switch, as the `quiet` request and `status` name them.
/// What quiet mode does to an item it applies to (`quiet-level`): silences it (`silent`, the
/// default: it ends `silenced`), or plays it that many dB lower (a night level: it ends `played`).
/// On the wire "silent" or the level in dB, a negative number.
public enum QuietLevel: Codable, Equatable, Sendable, CustomStringConvertible {
    case silent
    case lowered(Double)

    /// How low a night level may go, dB.
    public static let range: ClosedRange<Double> = -60...(-1)

    /// "silent", or a level in dB as `duck-level` takes it ("-15dB", "-15", "-15 dB").
    public init?(parsing text: String) {
        if text.trimming(" \t").lowercased() == "silent" {
            self = .silent
            return
        }
        guard let decibels = UserConfiguration.parseAnyDecibels(text), Self.range.contains(decibels) else { return nil }
        self = .lowered(decibels)
    }

    /// How much lower it plays, dB; nil for silent.
    public var decibels: Double? {
        guard case .lowered(let decibels) = self else { return nil }
        return decibels
    }

    public var description: String { NumberOrWord.text(decibels, unit: "dB", word: "silent") }

    public init(from decoder: any Decoder) throws {
        self = try NumberOrWord.decode(from: decoder, word: "silent").map(QuietLevel.lowered) ?? .silent
    }

    public func encode(to encoder: any Encoder) throws {
        try NumberOrWord.encode(decibels, word: "silent", to: encoder)
    }
}

public enum QuietSwitch: String, Codable, CaseIterable, Sendable {
    case on, off, until
}

/// What `status` and `announce quiet --json` report.
public struct QuietState: Codable, Equatable, Sendable {
    /// Quiet mode is in effect now: ambient and solo-ambient items end as `silenced`.
    public var quiet: Bool
    /// The manual setting still in effect (nil: none, or it lapsed).
    public var setting: QuietSwitch?
    /// With `setting == .until`: when it ends.
    public var until: Double?
    /// The configured quiet hours (`HH:MM-HH:MM` on the wire).
    public var hours: [QuietHours] = []
    /// Why, in a few words: "quiet hours 22:00-07:00", "announce quiet on".
    public var reason: String
    /// What quiet mode does (the config file's `quiet-level`); absent from an older daemon: silent.
    public var level: QuietLevel?

    /// Sound as usual, for no reason worth telling (a status without quiet mode).
    public static let notQuiet = QuietState(quiet: false, reason: "")
}

/// One quiet-hours window, `HH:MM-HH:MM` local time: from the start minute (included) to the
/// end minute (excluded); a window whose end is not after its start crosses midnight
/// (`22:00-07:00`). `24:00` may end a window, so `00:00-24:00` is the whole day.
public struct QuietHours: Hashable, Codable, Sendable, CustomStringConvertible {
    /// Minutes since local midnight, 0 to 1439.
    public var start: Int
    /// Minutes since local midnight, 1 to 1440 (exclusive end).
    public var end: Int

    /// `22:00-07:00`, `7:30-8:00`, `00:00-24:00`. Throws `.usage` with a short reason.
    public init(parsing text: String) throws(AnnounceError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            .map { String($0).trimming(" \t") }
        guard parts.count == 2 else { throw .usage("quiet hours must look like HH:MM-HH:MM, not '\(text)'") }
        guard let start = Self.minutes(parts[0], allowingEnd: false) else {
            throw .usage("'\(parts[0])' is not a time of day (HH:MM, 00:00 to 23:59)")
        }
        guard let end = Self.minutes(parts[1], allowingEnd: true) else {
            throw .usage("'\(parts[1])' is not a time of day (HH:MM, 00:00 to 24:00)")
        }
        guard start != end else {
            throw .usage("quiet hours '\(text)' start and end at the same time; use 00:00-24:00 for the whole day")
        }
        self.start = start
        self.end = end
    }

    public func contains(minute: Int) -> Bool {
        start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
    }

    public var description: String { "\(Self.text(start))-\(Self.text(end))" }

    /// `HH:MM-HH:MM`, as the config file has it (status's `quietHours`, quiet's `hours`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do { self = try QuietHours(parsing: text) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Minutes since midnight of a whole-minute time of day; `24:00` only when `allowingEnd`.
    private static func minutes(_ text: String, allowingEnd: Bool) -> Int? {
        if allowingEnd && text == "24:00" { return 1440 }
        guard let time = TimeOfDay(parsing: text), time.second == 0 else { return nil }
        return time.hour * 60 + time.minute
    }

    private static func text(_ minutes: Int) -> String {
        let hour = minutes / 60
        let minute = minutes % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}

/// A local time of day as users write it: `7:30`, `07:30` or `07:30:15`, hours 0 to 23.
/// Quiet hours and the command line's `--at` and `quiet until` all read times with it.
public struct TimeOfDay: Equatable, Sendable {
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init?(parsing text: String) {
        guard let time = try? TimeOfDay(validating: text) else { return nil }
        self = time
    }

    /// `HH:MM` or `HH:MM:SS` on a 24-hour clock, or why `text` is not one.
    public init(validating text: String) throws(TimeTextError) {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        // ASCII digits only: Int(_:) alone would take "+7".
        guard (2...3).contains(fields.count), (1...2).contains(fields[0].utf8.count),
            fields.dropFirst().allSatisfy({ $0.utf8.count == 2 }),
            fields.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } })
        else { throw TimeTextError("not a time of day; give HH:MM or HH:MM:SS on a 24-hour clock, like 07:30") }
        let numbers = fields.compactMap { Int($0) }
        let second = numbers.count == 3 ? numbers[2] : 0
        guard numbers[0] <= 23 else {
            throw TimeTextError("hour \(numbers[0]) is past 23 (a 24-hour clock runs 00:00 to 23:59)")
        }
        guard numbers[1] <= 59 else { throw TimeTextError("minute \(numbers[1]) is past 59") }
        guard second <= 59 else { throw TimeTextError("second \(second) is past 59") }
        hour = numbers[0]
        minute = numbers[1]
        self.second = second
    }
}

extension String {
    /// Without leading and trailing characters from `set` (no Foundation needed).
    package func trimming(_ set: String) -> String {
        let characters = Set(set)
        guard let first = firstIndex(where: { !characters.contains($0) }),
            let last = lastIndex(where: { !characters.contains($0) })
        else { return "" }
        return String(self[first...last])
    }
}
