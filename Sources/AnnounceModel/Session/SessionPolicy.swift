/// Why a stream was paused by someone else: the `reason` of `interruption-began` (DESIGN §3).
public enum InterruptionReason: String, Codable, CaseIterable, Sendable {
    /// The scheduler gave the main lane to an item of higher priority.
    case preempted
    /// A non-mixable session activated while this non-mixable one played.
    case nonMixableActivation = "non-mixable-activation"
    /// This stream's mode is spoken-audio and an `--interrupt-spoken-audio` session activated.
    case spokenAudioInterrupted = "spoken-audio-interrupted"
    /// Another program holds the sound device. Never produced by `SessionPolicy`: the daemon's
    /// own, listed here so every `interruption-began` reason has one spelling.
    case deviceBusy = "device-busy"
    /// The device went away mid-play (a `route-change` says which); also the daemon's own.
    case deviceLost = "device-lost"
    /// Another application's call (a stream of an interrupting role) plays; the daemon's own too.
    case call
}

/// A stream the policy pauses: emit `interruption-began` for `id` with `reason`.
public struct Interruption: Equatable, Sendable {
    public var id: ItemID
    /// The stream whose activation caused it.
    public var by: ItemID
    public var reason: InterruptionReason
}

/// An interruption that is over: emit `interruption-ended` for `id` with `should-resume`.
/// With `shouldResume` the stream continues where it stopped; without, it stays paused
/// until `SessionPolicy.resume(_:)` (`announce resume`).
public struct InterruptionEnd: Equatable, Sendable {
    public var id: ItemID
    /// The session whose deactivation ended it (the last that held it).
    public var by: ItemID
    public var shouldResume: Bool
}

/// Gain changes: ramp `ducked` down to the duck level (about 150 ms) and `unducked` back up (about 400 ms).
public struct DuckChanges: Equatable, Sendable {
    public var ducked: [ItemID] = []
    public var unducked: [ItemID] = []

    public var isEmpty: Bool { ducked.isEmpty && unducked.isEmpty }
}

/// A stream with an active session: from its first frame until its final outcome, including
/// while it is interrupted or waits for `announce resume`.
public struct ActiveStream: Codable, Equatable, Sendable {
    public var id: ItemID
    public var session: AudioSession
    /// The active sessions that interrupted it and have not ended yet, in the order they did.
    /// Non-empty: it is paused until the last ends (what clients are told is `ItemLifecycle`'s).
    public var interruptedBy: [ItemID] = []
    /// A `--no-notify-others` session that interrupted it has ended: once no interruption holds it,
    /// it stays paused until an explicit resume.
    public var awaitsResume = false
    /// Its gain is at the duck level (or ramping there), also while paused, so it resumes at the right level.
    public var ducked = false
    /// Paused for a reason outside the policy (the queue paused, its device busy or gone): it
    /// keeps its session and interruptions, but does not duck others meanwhile.
    public var suspended = false

    public var isInterrupted: Bool { !interruptedBy.isEmpty }
    /// Producing sound: neither interrupted nor waiting for a resume. Only playing streams duck others.
    public var isPlaying: Bool { interruptedBy.isEmpty && !awaitsResume && !suspended }
}

/// What happens when a session activates. Ids are in activation order.
public struct PolicyDecision: Equatable, Sendable {
    /// The stream that activates.
    public var id: ItemID
    /// It starts at the duck level: a playing duck-others stream is already active.
    public var startsDucked = false
    /// Streams that pause now (they were playing; interruption-began). Streams already interrupted
    /// are not listed again, but stay paused until this session ends too.
    public var interrupted: [Interruption] = []
    /// Gain changes for the other streams.
    public var ducking = DuckChanges()
}

/// What happens when a session ends. Ids are in activation order.
public struct DeactivationDecision: Equatable, Sendable {
    /// The stream that ended.
    public var id: ItemID
    /// Interruptions it was the last to hold (interruption-ended).
    public var ended: [InterruptionEnd] = []
    /// Gain changes: unducked when it was the last playing duck-others stream; ducked when a
    /// duck-others stream it had interrupted plays again.
    public var ducking = DuckChanges()
}

/// The session policy (DESIGN §3): who mixes, who is interrupted, who is ducked, who resumes.
///
/// A value type holding the active streams; each call changes them and returns what the daemon
/// must do, like `Scheduler`. No I/O, no clock: copy it to preview a decision without applying it.
///
/// Rules:
/// - Lane: non-mixable sessions take the main lane (one at a time, queue order); mixable ones
///   (`AudioSession.mixesWithOthers`) start at once on the mixed lane.
/// - Activation interrupts (the newcomer wins; an active session never interrupts a later one):
///   - a non-mixable session interrupts every active non-mixable stream (on the main lane this
///     is the scheduler's preemption; reason `.preempted` for the id passed as `preempting`,
///     `.nonMixableActivation` otherwise). Mixable streams keep playing.
///   - `interruptSpokenAudioAndMixWithOthers` interrupts every active stream of mode spoken-audio,
///     on either lane, in any category (`.spokenAudioInterrupted`).
///   - `preempting` is interrupted whatever its session.
/// - An interrupted stream stays paused until every session that interrupted it has ended.
///   When the last ends, it gets `interruption-ended`; `shouldResume` is false if any of its
///   interrupters had `notifyOthersOnDeactivation` off (it then waits for `resume(_:)`).
/// - Ducking: a stream is ducked while some *other playing* stream has `duckOthers`, unless it
///   has `duckOthers` itself (two duck-others announcements stay at full level together; the
///   background is lowered). Interrupted and waiting streams are ducked too, so they resume at
///   the right level, but they do not duck others while paused.
///
/// How the daemon applies it:
/// 1. Enqueue: while quiet, a session whose `category.silencedByQuietMode` ends `silenced`; the
///    others go by `session.lane`: `.main` to the scheduler, `.mixed` straight to the mixer.
/// 2. First frame of a stream (the scheduler's `.play`, or at once for mixed): `activate`. Pause
///    each `interrupted` stream at its heard position and emit `interruption-began` with
///    `reason.rawValue`; start the new stream at the duck level if `startsDucked`; ramp `ducking`.
///    When the scheduler preempted an item for this one, pass it as `preempting`: the scheduler's
///    `.interrupted` effect and the listed `Interruption` are the same event, emit it once.
/// 3. Final outcome of a stream: `deactivate`. Emit `interruption-ended` for each `ended`; continue
///    those with `shouldResume` (a preempted main-lane item is already at the head of its class),
///    keep the others paused; ramp `ducking`. A main-lane item the scheduler sends back to the
///    queue is interrupted, not deactivated; when it plays again, do not activate it again.
///    (If the scheduler starts another main-lane item instead, that activation interrupts it
///    again; the daemon may fold an `interruption-ended` immediately followed by an
///    `interruption-began` for the same id.)
/// 4. `announce resume`: `resume(_:)` every id in `awaitingResume` and continue it.
public struct SessionPolicy: Equatable, Sendable {
    /// In activation order.
    public private(set) var streams: [ActiveStream]

    /// Starts from streams already active, e.g. rebuilt after a restart; their `ducked` and
    /// `interruptedBy` are taken as they are, and later decisions report changes relative to them.
    public init(streams: [ActiveStream] = []) {
        self.streams = streams
    }

    public subscript(id: ItemID) -> ActiveStream? { streams.first { $0.id == id } }

    /// Streams whose interruptions are over but wait for `announce resume`.
    public var awaitingResume: [ItemID] { streams.filter { $0.awaitsResume && !$0.isInterrupted }.map(\.id) }

    /// Playing streams that duck the others (for `status`).
    public var duckers: [ItemID] { streams.filter { $0.isPlaying && $0.session.options.duckOthers }.map(\.id) }

    /// A stream starts playing with `session`. An id already active is replaced: its record starts over,
    /// the interruptions it caused stay. `preempting`: the main-lane item the scheduler stopped for it.
    public mutating func activate(_ id: ItemID, session: AudioSession, preempting: ItemID? = nil) -> PolicyDecision {
        streams.removeAll { $0.id == id }
        var interrupted: [Interruption] = []
        for index in streams.indices {
            let other = streams[index]
            let reason: InterruptionReason
            if other.id == preempting {
                reason = .preempted
            } else if session.interruptsNonMixable && !other.session.mixesWithOthers {
                reason = .nonMixableActivation
            } else if session.interruptsSpokenAudio && other.session.mode == .spokenAudio {
                reason = .spokenAudioInterrupted
            } else {
                continue
            }
            if !other.isInterrupted { interrupted.append(Interruption(id: other.id, by: id, reason: reason)) }
            if !other.interruptedBy.contains(id) { streams[index].interruptedBy.append(id) }
        }
        streams.append(ActiveStream(id: id, session: session))
        let ducking = reduck(except: id)
        let startsDucked = Self.shouldDuck(streams[streams.count - 1], among: streams)
        streams[streams.count - 1].ducked = startsDucked
        return PolicyDecision(id: id, startsDucked: startsDucked, interrupted: interrupted, ducking: ducking)
    }

    /// A stream reached its final outcome. Its interruptions end (should-resume by its
    /// `notifyOthersOnDeactivation`), and its ducking with it. An id not active changes nothing.
    public mutating func deactivate(_ id: ItemID) -> DeactivationDecision {
        guard let index = streams.firstIndex(where: { $0.id == id }) else { return DeactivationDecision(id: id) }
        let notify = streams[index].session.options.notifyOthersOnDeactivation
        streams.remove(at: index)
        var ended: [InterruptionEnd] = []
        for index in streams.indices where streams[index].interruptedBy.contains(id) {
            streams[index].interruptedBy.removeAll { $0 == id }
            if !notify { streams[index].awaitsResume = true }
            if !streams[index].isInterrupted {
                ended.append(InterruptionEnd(id: streams[index].id, by: id, shouldResume: !streams[index].awaitsResume))
            }
        }
        return DeactivationDecision(id: id, ended: ended, ducking: reduck(except: nil))
    }

    /// `announce resume` for a stream left paused by a `--no-notify-others` session. It plays again
    /// unless another session still interrupts it (it then resumes when that one ends, should-resume
    /// by that one's flag). Returns the gain changes (it may duck others again).
    public mutating func resume(_ id: ItemID) -> DuckChanges {
        guard let index = streams.firstIndex(where: { $0.id == id }) else { return DuckChanges() }
        streams[index].awaitsResume = false
        return reduck(except: nil)
    }

    /// A stream stops or starts producing sound for a reason outside the policy (a pause, a
    /// busy or lost device): while suspended it does not duck others. Returns the gain changes.
    public mutating func setSuspended(_ id: ItemID, _ suspended: Bool) -> DuckChanges {
        guard let index = streams.firstIndex(where: { $0.id == id }), streams[index].suspended != suspended else {
            return DuckChanges()
        }
        streams[index].suspended = suspended
        return reduck(except: nil)
    }

    /// Whether `stream` should be at the duck level among `streams`.
    private static func shouldDuck(_ stream: ActiveStream, among streams: [ActiveStream]) -> Bool {
        !stream.session.options.duckOthers
            && streams.contains { $0.id != stream.id && $0.isPlaying && $0.session.options.duckOthers }
    }

    /// Brings every `ducked` flag (but `except`'s) up to date and lists the changes.
    private mutating func reduck(except excluded: ItemID?) -> DuckChanges {
        var changes = DuckChanges()
        let snapshot = streams
        for index in streams.indices where streams[index].id != excluded {
            let duck = Self.shouldDuck(snapshot[index], among: snapshot)
            guard duck != streams[index].ducked else { continue }
            streams[index].ducked = duck
            if duck { changes.ducked.append(streams[index].id) } else { changes.unducked.append(streams[index].id) }
        }
        return changes
    }
}
