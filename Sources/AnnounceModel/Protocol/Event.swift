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
    /// A device went away (`reason` old-device-unavailable) or came back (new-device-available).
    case routeChange = "route-change"
    /// To a client that waits with `progress`: why its item has not started, sent when that changes.
    case waiting
    /// A live stream's title changed.
    case title
}

/// One event: when, and what happened with only the fields of its kind. On the wire it is one
/// flat JSON object (`Event.Wire`); reading a field of it (`event.heard`) reads that object.
@dynamicMemberLookup
public struct Event: Codable, Equatable, Sendable {
    /// Seconds since the epoch, daemon clock.
    public var time: Double
    public var payload: Payload

    public init(time: Double, _ payload: Payload) {
        self.time = time
        self.payload = payload
    }

    /// Each kind's fields. Seconds heard and lengths are of the item's program; `device` and
    /// `format` are the ALSA PCM and the format it was opened with.
    public enum Payload: Equatable, Sendable {
        case queued(EventItem)
        case started(
            EventItem, heard: Double? = nil, duration: Double? = nil, device: String? = nil, format: String? = nil)
        /// `percent`: the milestone (25, 50, 75) for `events`; nil for a waiting terminal's ticks.
        case progress(EventItem, heard: Double? = nil, duration: Double? = nil, percent: Int? = nil)
        /// `warning`: the call or the device's problem that interrupted it. `reason` (and a
        /// waiting item's) is absent only where another user's item is shown without its words.
        case interruptionBegan(
            EventItem, reason: EventReason?, heard: Double? = nil, device: String? = nil, warning: String? = nil)
        /// `shouldResume`: the item goes on by itself.
        case interruptionEnded(EventItem, shouldResume: Bool)
        /// `reason`: the outcome's, in words; `device`: every device it played on, listed;
        /// `frames`: heard in its last play; `warning`: truncated input, underruns.
        case finished(
            EventItem, outcome: Outcome, reason: EventReason? = nil, heard: Double? = nil, duration: Double? = nil,
            device: String? = nil, format: String? = nil, frames: Int64? = nil, warning: String? = nil)
        /// Why it has not started (queued, scheduled, paused, device-busy, device-lost, held, …);
        /// queued: how many play first and about how many seconds until it starts (when every
        /// one ahead has a known length); scheduled: when it is due.
        case waiting(
            EventItem, reason: EventReason?, ahead: Int? = nil, wait: Double? = nil, at: Double? = nil,
            warning: String? = nil)
        /// A live stream's title now (nil: it has none now).
        case title(EventItem, title: String? = nil)
        case deviceOpened(device: String, format: String? = nil)
        case deviceClosed(device: String)
        case routeChange(reason: EventReason, device: String, format: String? = nil, warning: String? = nil)
        /// `quiet`: quiet mode is in effect now; `state`: the switch; `until`: the end of `until`.
        case quiet(reason: EventReason? = nil, quiet: Bool, state: QuietSwitch, until: Double? = nil)
        case paused
        case resumed
    }

    public var kind: EventKind { Wire(self).event }

    /// The item it is about, for an item's event.
    public var item: EventItem? {
        switch payload {
        case .queued(let item), .started(let item, _, _, _, _), .progress(let item, _, _, _),
            .interruptionBegan(let item, _, _, _, _), .interruptionEnded(let item, _),
            .finished(let item, _, _, _, _, _, _, _, _), .waiting(let item, _, _, _, _, _), .title(let item, _):
            item
        case .deviceOpened, .deviceClosed, .routeChange, .quiet, .paused, .resumed: nil
        }
    }

    public var id: ItemID? { item?.id }

    /// A field as the JSON object has it: nil where this kind has none.
    public subscript<Value>(dynamicMember field: KeyPath<Wire, Value>) -> Value { Wire(self)[keyPath: field] }

    public init(from decoder: any Decoder) throws { try self.init(Wire(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try Wire(self).encode(to: encoder) }
}

/// The item an event is about: its id, and what its owner and others may see of it.
public struct EventItem: Equatable, Sendable {
    public var id: ItemID
    public var path: String?
    public var priority: Priority?
    /// System queue: who queued it.
    public var owner: ItemOwner?

    public init(_ id: ItemID, path: String? = nil, priority: Priority? = nil, owner: ItemOwner? = nil) {
        self.id = id
        self.path = path
        self.priority = priority
        self.owner = owner
    }
}

extension EventItem {
    /// A queued item as its events name it.
    public init(_ item: QueueItem) {
        self.init(item.id, path: item.clip.path, priority: item.priority, owner: item.owner)
    }
}
