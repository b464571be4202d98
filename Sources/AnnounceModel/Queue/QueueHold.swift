/// Why the main lane is held apart from a user's pause (DESIGN §3): nothing starts while any
/// hold is in place, and `announce resume` lifts only `awaitingResume`'s.
/// Ordered by which one a waiting item is told first (the device before a session, then a
/// session's interruption before a `--no-notify-others` pause), as status lists them.
public enum QueueHold: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Another program holds the device; it is tried again with backoff.
    case deviceBusy
    /// The device went away mid-play; it is reopened with backoff until it is back.
    case deviceLost
    /// Another application's call plays; lifted when it ends (or corks).
    case call
    /// `--if-other-audio wait`: the item at the head waits until no other audio plays.
    case otherAudio
    /// A session interrupted the lane (this item's id); lifted when it ends.
    case interruptedBy(ItemID)
    /// A `--no-notify-others` session left the lane paused until `announce resume`.
    case awaitingResume

    /// As status's `holds` and the events say it.
    public var reason: EventReason {
        switch self {
        case .deviceBusy: .deviceBusy
        case .deviceLost: .deviceLost
        case .call: .call
        case .otherAudio: .otherAudioPlaying
        case .interruptedBy(let id): .interruptedBy(id)
        case .awaitingResume: .awaitingResume
        }
    }

    public var description: String { reason.description }
}
