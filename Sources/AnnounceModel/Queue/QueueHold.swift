/// Why the main lane is held apart from a user's pause (DESIGN §3): nothing starts while any
/// hold is in place, and `announce resume` lifts only `awaitingResume`'s.
public enum QueueHold: Hashable, Sendable, CustomStringConvertible {
    /// Another program holds the device; it is tried again with backoff.
    case deviceBusy
    /// The device went away mid-play; it is reopened with backoff until it is back.
    case deviceLost
    /// A `--no-notify-others` session left the lane paused until `announce resume`.
    case awaitingResume
    /// A session interrupted the lane (this item's id); lifted when it ends.
    case interruptedBy(String)

    /// As status's `holds` and the events say it.
    public var description: String {
        switch self {
        case .deviceBusy: "device-busy"
        case .deviceLost: "device-lost"
        case .awaitingResume: "waiting for announce resume"
        case .interruptedBy(let id): "interrupted by \(id)"
        }
    }
}
