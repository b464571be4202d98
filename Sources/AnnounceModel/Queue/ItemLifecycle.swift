/// One item's life as its clients hear of it: queued → starting → playing, then interrupted
/// and resumed any number of times, then one final outcome, after which nothing changes it.
/// The single place that decides what is announced of an item: its start once per play,
/// whether an interruption begins or ends (whoever caused it: the scheduler, a session, the
/// device), and its one outcome. Pure: the daemon reports what happened; a `true` (or non-nil)
/// answer means "announce it". The daemon makes one when it accepts or restores an item.
public struct ItemLifecycle: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        /// Accepted, not handed to the engines (or its play ended and it waits to play again).
        case queued
        /// Handed to the engines; nothing heard yet in this play.
        case starting
        /// Its frames are being heard.
        case playing
        /// Stopped or kept waiting, to go on later from what was heard.
        case interrupted
        /// Its frames are heard again after an interruption.
        case resumed
        /// Ended for good.
        case final(Outcome)
    }

    public private(set) var state: State
    /// Interrupted since its frames were last heard: its next frames resume it (kept through `start`).
    private var resumes: Bool
    /// Its interruption-began was announced and no interruption-ended yet.
    private var endUnannounced: Bool
    /// Frames of the play in progress were heard (a multi-route play reports a start per device).
    private var heardInPlay = false

    /// `interrupted`: restored from the spool as interrupted (its next frames heard end that).
    public init(interrupted: Bool = false) {
        state = interrupted ? .interrupted : .queued
        resumes = interrupted
        endUnannounced = interrupted
    }

    public var isInterrupted: Bool { state == .interrupted }

    public var isFinal: Bool {
        if case .final = state { true } else { false }
    }

    /// Handed to the engines or playing: what `status` calls playing.
    public var isPlaying: Bool { state == .starting || state == .playing || state == .resumed }

    /// What the first frames heard in a play announce.
    public struct Heard: Equatable, Sendable {
        /// They end an interruption whose beginning was announced: interruption-ended.
        public var endsInterruption: Bool
    }

    /// Handed to the engines: a new play begins.
    public mutating func start() {
        guard !isFinal else { return }
        state = .starting
        heardInPlay = false
    }

    /// Frames of the play in progress were heard. Nil unless these are its first (its start is
    /// announced once) and it is not final. An interruption ends here unless a session still
    /// interrupts it (`stillInterrupted`: its play is about to stop).
    public mutating func heard(stillInterrupted: Bool) -> Heard? {
        guard !isFinal, !heardInPlay else { return nil }
        heardInPlay = true
        if stillInterrupted && endUnannounced {
            state = .interrupted
            return Heard(endsInterruption: false)
        }
        let ends = endUnannounced
        state = resumes ? .resumed : .playing
        resumes = false
        endUnannounced = false
        return Heard(endsInterruption: ends)
    }

    /// Its play ended without an outcome or an interruption (it waits for its device, or plays
    /// again at once): no longer playing.
    public mutating func playEnded() {
        if isPlaying { state = .queued }
    }

    /// It was stopped or kept from playing, to go on later. True when the interruption
    /// begins now; false when one already was announced, or it is final.
    public mutating func interrupt() -> Bool {
        guard !isFinal else { return false }
        state = .interrupted
        resumes = true
        defer { endUnannounced = true }
        return !endUnannounced
    }

    /// What interrupted it is over (a session ended); it waits to be played again, still
    /// interrupted until its frames are heard. True when an interruption was announced.
    public mutating func endInterruption() -> Bool {
        guard !isFinal, endUnannounced else { return false }
        endUnannounced = false
        return true
    }

    /// Ends it with `outcome`. True the first time; any later outcome is ignored.
    public mutating func finish(_ outcome: Outcome) -> Bool {
        if isFinal { return false }
        state = .final(outcome)
        return true
    }
}
