#if canImport(Glibc)
import Glibc
#endif

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

    /// The system's local time zone (TZ, /etc/localtime), through localtime_r.
    public static let systemLocalMinutes: LocalMinutes = { epoch in
        var clock = time_t(epoch.rounded(.down))
        var fields = tm()
        localtime_r(&clock, &fields)
        return Int(fields.tm_hour) * 60 + Int(fields.tm_min)
    }

    public var setting: QuietSetting?
    public var hours: [QuietHours]
    public var localMinutes: LocalMinutes

    public init(setting: QuietSetting? = nil, hours: [QuietHours] = [],
                localMinutes: @escaping LocalMinutes = QuietMode.systemLocalMinutes) {
        self.setting = setting
        self.hours = hours
        self.localMinutes = localMinutes
    }

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
        return QuietState(quiet: quiet, setting: active?.kind, until: until, hours: hours.map(\.description), reason: reason)
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
        switch try container.decode(QuietSwitch.self, forKey: .state) {
        case .on: self = .on
        case .off: self = .off(since: try container.decodeIfPresent(Double.self, forKey: .since) ?? 0)
        case .until: self = .until(try container.decode(Double.self, forKey: .until))
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
    /// The configured quiet hours, `HH:MM-HH:MM`.
    public var hours: [String]
    /// Why, in a few words: "quiet hours 22:00-07:00", "announce quiet on".
    public var reason: String

    public init(quiet: Bool, setting: QuietSwitch? = nil, until: Double? = nil, hours: [String] = [], reason: String) {
        self.quiet = quiet
        self.setting = setting
        self.until = until
        self.hours = hours
        self.reason = reason
    }
}

/// One quiet-hours window, `HH:MM-HH:MM` local time: from the start minute (included) to the
/// end minute (excluded); a window whose end is not after its start crosses midnight
/// (`22:00-07:00`). `24:00` may end a window, so `00:00-24:00` is the whole day.
public struct QuietHours: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Minutes since local midnight, 0 to 1439.
    public var start: Int
    /// Minutes since local midnight, 1 to 1440 (exclusive end).
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

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

    /// `H:MM` or `HH:MM` → minutes; `24:00` only when `allowingEnd`.
    static func minutes(_ text: String, allowingEnd: Bool) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]) else { return nil }
        if allowingEnd && hour == 24 && minute == 0 { return 1440 }
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        return hour * 60 + minute
    }

    static func text(_ minutes: Int) -> String {
        let hour = minutes / 60, minute = minutes % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}

extension SessionCategory {
    /// ambient and solo-ambient end as `silenced` while quiet mode is on (DESIGN §3).
    public var silencedByQuietMode: Bool { AudioSession(category: self).silencedByQuietMode }
}

extension String {
    /// Without leading and trailing characters from `set` (no Foundation needed).
    func trimming(_ set: String) -> String {
        let characters = Set(set)
        guard let first = firstIndex(where: { !characters.contains($0) }),
              let last = lastIndex(where: { !characters.contains($0) }) else { return "" }
        return String(self[first...last])
    }
}
