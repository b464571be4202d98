/// What the daemon tells its clients happened (docs/protocol.md, Events).
public enum EventKind: String, Codable, CaseIterable, Sendable {
    case queued
    /// The first frames went to the device.
    case started
    /// Frames heard so far; milestones (25/50/75%) for `events`, every 100 ms for a waiting terminal.
    case progress
    case interruptionBegan = "interruption-began"
    case interruptionEnded = "interruption-ended"
    case finished
    case deviceOpened = "device-opened"
    case deviceClosed = "device-closed"
    case paused, resumed
    /// The quiet switch was changed (`announce quiet`).
    case quiet
    /// A device went away (`reason` old-device-unavailable) or came back (new-device-available);
    /// `device` names it.
    case routeChange = "route-change"
    /// To a client that waits with `progress`: why its item has not started (`reason`: queued,
    /// scheduled, paused, device-busy, device-lost, held), sent when that changes.
    case waiting
    /// A live stream's title changed (`title`; absent: it has none now).
    case title
}

public struct Event: Codable, Equatable, Sendable {
    public var v: Int
    public var event: EventKind
    /// Seconds since the epoch, daemon clock.
    public var time: Double
    public var id: ItemID?
    public var path: String?
    public var priority: Priority?
    /// waiting, interruption-began, route-change: why, typed; finished, quiet: in words (`.other`).
    public var reason: EventReason?
    /// interruption-ended: the item goes on by itself.
    public var shouldResume: Bool?
    /// progress, finished: seconds heard; duration when known.
    public var heard: Double?
    public var duration: Double?
    /// progress milestones: 25, 50, 75.
    public var percent: Int?
    public var outcome: Outcome?
    /// started, finished, device-*: the ALSA PCM and the format it was opened with. route-change: the device.
    public var device: String?
    public var format: String?
    /// finished: frames heard in its last play, and a warning (truncated input, underruns).
    public var frames: Int64?
    public var warning: String?
    /// quiet: quiet mode is in effect now, the switch position, and the end of `until`.
    public var quiet: Bool?
    public var state: QuietSwitch?
    public var until: Double?
    /// waiting: items that play first (queued), about how many seconds until it starts when
    /// every one ahead has a known length, and when a scheduled item is due.
    public var ahead: Int?
    public var wait: Double?
    public var at: Double?
    /// title: a live stream's title now.
    public var title: String?
    /// System queue: who queued the item.
    public var owner: ItemOwner?

    public init(
        _ event: EventKind, time: Double, id: ItemID? = nil, path: String? = nil, priority: Priority? = nil,
        reason: EventReason? = nil, shouldResume: Bool? = nil, heard: Double? = nil, duration: Double? = nil,
        percent: Int? = nil, outcome: Outcome? = nil, device: String? = nil, format: String? = nil,
        frames: Int64? = nil, warning: String? = nil, quiet: Bool? = nil, state: QuietSwitch? = nil,
        until: Double? = nil
    ) {
        v = WireProtocol.version
        self.event = event
        self.time = time
        self.id = id
        self.path = path
        self.priority = priority
        self.reason = reason
        self.shouldResume = shouldResume
        self.heard = heard
        self.duration = duration
        self.percent = percent
        self.outcome = outcome
        self.device = device
        self.format = format
        self.frames = frames
        self.warning = warning
        self.quiet = quiet
        self.state = state
        self.until = until
    }
}
