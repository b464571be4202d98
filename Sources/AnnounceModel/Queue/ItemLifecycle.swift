/// One item's life as its clients hear of it: queued → starting → playing, interrupted and
/// resumed any number of times, then one final outcome, after which nothing changes it. The
/// single place that decides whether an interruption begins or ends, whoever caused it (the
/// scheduler, a session, the device), so each is announced once. Pure: the daemon reports
/// what happened; a `true` answer means "announce it".
public struct ItemLifecycle: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        /// Accepted, not yet handed to the engines.
        case queued
        /// Handed to the engines; nothing heard yet in this play.
        case starting
        /// Its frames are being heard.
        case playing
        /// Stopped or kept waiting, to go on later from what was heard.
        case interrupted
        /// Ended for good.
        case final(Outcome)
    }

    public private(set) var state: State

    /// `interrupted`: restored from the spool as interrupted (its next play ends that).
    public init(interrupted: Bool = false) {
        state = interrupted ? .interrupted : .queued
    }

    public var isInterrupted: Bool { state == .interrupted }

    public var isFinal: Bool {
        if case .final = state { true } else { false }
    }

    /// Handed to the engines. An interruption lasts until frames are heard again.
    public mutating func start() {
        if state == .queued || state == .playing { state = .starting }
    }

    /// Its first frames in a play were heard. True when that ends an interruption (unless a
    /// session still interrupts it: `stillInterrupted`).
    public mutating func heard(stillInterrupted: Bool) -> Bool {
        switch state {
        case .interrupted where stillInterrupted, .final:
            return false
        case .interrupted:
            state = .playing
            return true
        case .queued, .starting, .playing:
            state = .playing
            return false
        }
    }

    /// It was stopped or kept from playing, to go on later. True when the interruption
    /// begins now; false when it already was interrupted, or is final.
    public mutating func interrupt() -> Bool {
        switch state {
        case .interrupted, .final: return false
        case .queued, .starting, .playing:
            state = .interrupted
            return true
        }
    }

    /// What interrupted it is over (a session ended); it waits to be played again. True when
    /// it was interrupted.
    public mutating func endInterruption() -> Bool {
        guard state == .interrupted else { return false }
        state = .queued
        return true
    }

    /// Ends it with `outcome`. True the first time; any later outcome is ignored.
    public mutating func finish(_ outcome: Outcome) -> Bool {
        if isFinal { return false }
        state = .final(outcome)
        return true
    }
}
