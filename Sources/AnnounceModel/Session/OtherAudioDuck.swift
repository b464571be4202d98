/// Another application's playback stream as the sound server reports it (a PulseAudio or
/// pipewire-pulse sink input). Volumes are the server's per-channel integers (0x10000 = 100 %).
public struct OtherStream: Equatable, Sendable {
    public var index: UInt32
    public var volume: [UInt32]
    /// The server lets its volume be set (a passthrough stream does not).
    public var settable: Bool
    public var processID: Int64?
    public var role: String
    public var application: String
    /// Paused by its application: it makes no sound (it still counts for a duck).
    public var corked: Bool

    public init(
        index: UInt32, volume: [UInt32], settable: Bool = true, processID: Int64? = nil, role: String = "",
        application: String = "", corked: Bool = false
    ) {
        self.index = index
        self.volume = volume
        self.settable = settable
        self.processID = processID
        self.role = role
        self.application = application
        self.corked = corked
    }
}

/// A stream announce lowered: what it was, so it can be put back exactly (the journal's entry).
public struct LoweredStream: Codable, Equatable, Sendable {
    public var index: UInt32
    public var application: String
    public var processID: Int64?
    /// Its volume before the duck: what it gets back.
    public var original: [UInt32]
    /// The volume announce set last; another value means someone else changed it meanwhile.
    public var lastSet: [UInt32]
    /// When announce first lowered it (the duck's clock).
    public var since: Double
    /// Its application's entry in the server's restore database, read before the stream was first lowered:
    /// nil when the server keeps none.
    public var restore: StreamRestore?

    /// What the restore database must hold once this stream ended while lowered (the server saved the
    /// lowered volume there): the entry it held before, else the stream's own with its original volume.
    public var entryAfterEnd: RestoreEntry? {
        guard let restore else { return nil }
        if let saved = restore.saved { return saved }
        var entry = restore.stream
        entry.volume = original.count == entry.channelMap.count ? original : []
        return entry
    }

    /// The same stream as `stream` (a server reuses an index only after a restart; the process checks it).
    public func matches(_ stream: OtherStream) -> Bool {
        stream.index == index && stream.processID == processID && stream.volume.count == original.count
    }
}

/// An entry of the sound server's restore database (module-stream-restore, or WirePlumber's
/// restore-stream through pipewire-pulse): what the next stream of that name starts with.
public struct RestoreEntry: Codable, Equatable, Sendable {
    /// `sink-input-by-application-name:NAME`, by media role, application id or media name.
    public var name: String
    /// Channel positions (pa_channel_position_t).
    public var channelMap: [Int32]
    /// Per channel; empty: no volume kept.
    public var volume: [UInt32]
    public var device: String?
    public var muted: Bool

    public init(name: String, channelMap: [Int32], volume: [UInt32], device: String? = nil, muted: Bool = false) {
        self.name = name
        self.channelMap = channelMap
        self.volume = volume
        self.device = device
        self.muted = muted
    }
}

/// A stream's place in the restore database, read before announce first lowers it.
public struct StreamRestore: Codable, Equatable, Sendable {
    /// The stream as the database would keep it (its name, channel map, mute).
    public var stream: RestoreEntry
    /// The database's entry of that name then; nil when it had none (pipewire-pulse reads back only
    /// entries written through it).
    public var saved: RestoreEntry?

    public init(stream: RestoreEntry, saved: RestoreEntry?) {
        self.stream = stream
        self.saved = saved
    }
}

/// One volume to set.
public struct VolumeChange: Equatable, Sendable {
    public var index: UInt32
    public var volume: [UInt32]

    public init(index: UInt32, volume: [UInt32]) {
        self.index = index
        self.volume = volume
    }
}

/// What one look at the server's streams asks for.
public struct DuckStep: Equatable, Sendable {
    /// Set in order.
    public var changes: [VolumeChange] = []
    /// The journal's new contents, when they changed.
    public var journal: [LoweredStream]?
    /// Write `journal` before setting `changes` (a stream is lowered for the first time: the
    /// journal must know its original first); otherwise after (a restore is not forgotten
    /// before it is done).
    public var journalFirst = false
    /// Restore-database entries to write back, after `changes`: of streams that ended while lowered.
    public var restoreEntries: [RestoreEntry] = []
}

/// Ducking other applications (DESIGN §3, duckOthers): which of the sound server's streams to
/// lower, to what volume at each moment, and what to put back. Pure: the daemon's duck thread
/// lists the streams, calls `step`, and sets what it returns.
///
/// Rules:
/// - announce's own streams (its process id, or media.role=announce) are never touched; streams
///   with any other role, or none, are.
/// - The gain ramps from where it is to the target over the given time, along `shape` (the
///   daemon passes announce's own ducking curve, `GainRamp.shape`, and its 150 ms down and
///   400 ms up); retargeting starts from the gain reached.
/// - A server volume is cubic in amplitude (PulseAudio's software volume, as pipewire-pulse
///   maps it): a gain g scales each channel's volume by g^(1/3). Gain 1 gives the original
///   integers back exactly.
/// - A stream that appears while ducked is lowered too. One whose volume differs from what
///   announce set last (beyond rounding) was changed by its user: it is left as they set it
///   and forgotten, never restored over their choice (nor taken again during this duck). A
///   change within `settleSeconds` of the stream's first lowering is the server's own policy
///   setting a new stream's volume (WirePlumber's restore-stream does, just after the stream
///   appears), not a user: that volume becomes the stream's original. A stream that goes away
///   is forgotten.
/// - When the gain is back at 1 after a release, every stream still known gets its original
///   volume and the journal empties.
public struct OtherAudioDuck: Sendable {
    /// Rounding a server may apply on the way back (pipewire-pulse stores float volumes).
    static let tolerance: UInt32 = 3
    public static let settleSeconds = 0.5

    public let ownProcessID: Int64
    public static let ownRole = "announce"
    /// Roles never lowered: a call's (the interrupting roles), which pauses announce anyway.
    public var sparedRoles: [String] = []

    public private(set) var lowered: [LoweredStream] = []
    /// Streams whose user changed their volume during this duck: theirs until it ends, never taken again.
    private var leftAlone: [OtherStream] = []
    /// Where the gain goes (1: released).
    public private(set) var target: Double = 1
    private var rampFrom: Double = 1
    private var rampStart: Double = 0
    private var rampSeconds: Double = 0

    public init(ownProcessID: Int64, shape: @escaping Shape) {
        self.ownProcessID = ownProcessID
        self.shape = shape
    }

    /// The ramp's curve: progress 0…1 to the fraction of the way done, 0…1.
    public typealias Shape = @Sendable (Double) -> Double
    private let shape: Shape

    /// The gain at `now`.
    public func gain(at now: Double) -> Double {
        guard rampSeconds > 0 else { return target }
        let progress = min(1, max(0, (now - rampStart) / rampSeconds))
        return progress >= 1 ? target : rampFrom + (target - rampFrom) * shape(progress)
    }

    public func isRamping(at now: Double) -> Bool { rampSeconds > 0 && now < rampStart + rampSeconds }

    /// Nothing lowered, nothing to do.
    public var isIdle: Bool { target == 1 && lowered.isEmpty && leftAlone.isEmpty }

    /// Ducks to `gain` (linear, 0 to 1), or back to full level with 1, over `seconds` from the gain reached.
    public mutating func retarget(_ gain: Double, seconds: Double, now: Double) {
        let gain = min(1, max(0, gain))
        guard gain != target else { return }
        rampFrom = self.gain(at: now)
        rampStart = now
        rampSeconds = seconds
        target = gain
    }

    /// Forgets everything (the journal was restored by other means, or the server went away).
    public mutating func forget() {
        lowered = []
        leftAlone = []
    }

    /// announce's own streams and those of a spared role are never lowered.
    public func isSpared(_ stream: OtherStream) -> Bool {
        stream.processID == ownProcessID || stream.role == Self.ownRole
            || (!stream.role.isEmpty && sparedRoles.contains(stream.role))
    }

    /// Each channel of `original` at `gain`; exactly `original` at gain 1.
    public static func scaled(_ original: [UInt32], gain: Double) -> [UInt32] {
        if gain >= 1 { return original }
        let factor = cubeRoot(max(0, gain))
        return original.map { UInt32((Double($0) * factor).rounded()) }
    }

    /// x^(1/3) for x in 0…1 by Newton's method (the model has no libm): from 1 it decreases
    /// monotonically to the root; -60 dB (0.001) takes about 12 steps.
    static func cubeRoot(_ x: Double) -> Double {
        guard x > 0 else { return 0 }
        var y = 1.0
        for _ in 0..<64 {
            let next = y - (y * y * y - x) / (3 * y * y)
            if next >= y { break }
            y = next
        }
        return y
    }

    /// One stream, as the server numbers it (an index is reused only after a server restart).
    static func same(_ a: OtherStream, _ b: OtherStream) -> Bool { a.index == b.index && a.processID == b.processID }

    static func changedByUser(_ seen: [UInt32], lastSet: [UInt32]) -> Bool {
        seen.count != lastSet.count
            || zip(seen, lastSet).contains { max($0, $1) - min($0, $1) > max(tolerance, $1 / 100) }
    }

    /// The streams that `step` would lower for the first time: their restore-database entries are read before.
    public func newcomers(in streams: [OtherStream]) -> [OtherStream] {
        guard target < 1 else { return [] }
        return streams.filter { stream in
            stream.settable && !isSpared(stream) && !leftAlone.contains { Self.same($0, stream) }
                && !lowered.contains { $0.matches(stream) }
        }
    }

    /// One look at the server's `streams` at `now`; `restores`: the newcomers' places in the restore
    /// database, by stream index.
    public mutating func step(_ streams: [OtherStream], restores: [UInt32: StreamRestore] = [:], now: Double)
        -> DuckStep
    {
        let gain = self.gain(at: now)
        var result = DuckStep()
        var kept: [LoweredStream] = []
        var journalChanged = false
        leftAlone = leftAlone.filter { alone in streams.contains { Self.same($0, alone) } }
        for stream in streams
        where stream.settable && !isSpared(stream) && !leftAlone.contains(where: { Self.same($0, stream) }) {
            if var known = lowered.first(where: { $0.matches(stream) }) {
                if Self.changedByUser(stream.volume, lastSet: known.lastSet) {
                    if now - known.since < Self.settleSeconds {
                        known.original = stream.volume
                        journalChanged = true
                        result.journalFirst = true
                    } else {
                        leftAlone.append(stream)
                        journalChanged = true
                        continue
                    }
                }
                let wanted = Self.scaled(known.original, gain: gain)
                if wanted != stream.volume { result.changes.append(VolumeChange(index: stream.index, volume: wanted)) }
                known.lastSet = wanted
                kept.append(known)
            } else if target < 1 {
                let wanted = Self.scaled(stream.volume, gain: gain)
                kept.append(
                    LoweredStream(
                        index: stream.index, application: stream.application, processID: stream.processID,
                        original: stream.volume, lastSet: wanted, since: now, restore: restores[stream.index]))
                if wanted != stream.volume { result.changes.append(VolumeChange(index: stream.index, volume: wanted)) }
                journalChanged = true
                result.journalFirst = true
            }
        }
        // Ended while lowered: the server saved its lowered volume for the application's next stream.
        let ended = lowered.filter { known in !streams.contains { known.matches($0) } }
        result.restoreEntries = ended.compactMap(\.entryAfterEnd)
        if kept.count != lowered.count { journalChanged = true }
        if target == 1 && !isRamping(at: now) {
            // Released: the changes above put back the originals exactly; nothing is left to restore.
            if !kept.isEmpty { journalChanged = true }
            kept = []
            leftAlone = []
        }
        lowered = kept
        if journalChanged { result.journal = kept }
        return result
    }
}

/// The journal of a duck in progress (RUNTIME/ducked-others): written before a stream is first
/// lowered, emptied once it is restored, so a daemon killed mid-duck restores at its next start.
public struct OtherAudioJournal: Codable, Equatable, Sendable {
    public var v = 1
    /// The sound-server variables the server was reached with (`Clip.environment`).
    public var environment: [String: String]?
    public var streams: [LoweredStream]

    public init(environment: [String: String]?, streams: [LoweredStream]) {
        self.environment = environment
        self.streams = streams
    }
}
