/// What the daemon must do, in order, after a mixed-lane call.
public enum MixedLaneEffect: Equatable, Sendable {
    /// Play this item from `item.heardFrames` over whatever plays (`alert`: a system sound).
    case play(QueueItem, alert: Bool)
    /// Stop its play in progress; `playEnded` follows.
    case stop(id: ItemID)
    /// Write the item to the spool (it keeps what was heard).
    case persist(QueueItem)
    /// It waits for its device: silent meanwhile, it ducks no one.
    case suspend(id: ItemID)
    /// Final: it has left the lane.
    case finish(QueueItem, Outcome)
}

/// The mixed lane (DESIGN §3): mixable sessions and alerts, never queued: each starts at once
/// over whatever plays, and waits when a session interrupts it or its device is busy or gone.
/// Pure, like `Scheduler`: the daemon tells it what happened and carries out the effects it
/// returns. Whether a stream may play now is `SessionPolicy`'s answer, passed in.
public struct MixedLane: Sendable {
    public struct Stream: Equatable, Sendable {
        public var item: QueueItem
        public var isAlert: Bool
        /// A play is in progress on the engines (also while it is being stopped).
        public internal(set) var playing = false
        /// Why it does not play: paused by an interruption, or waiting for its device.
        public internal(set) var waiting: Waiting?
        /// Frames heard in the play in progress.
        public internal(set) var frames: Int64 = 0
        /// Why the play in progress is being stopped.
        var stopIntent: StopIntent?
    }

    /// What a stream that does not play waits for, so `resume` and `retryDevice` know which to
    /// play: the lane's fact. What clients are told of it is `ItemLifecycle`'s.
    public enum Waiting: Equatable, Sendable { case interrupted, device }
    enum StopIntent: Equatable, Sendable { case interrupt, end(Outcome) }

    private var streams: [ItemID: Stream] = [:]

    public init() {}

    public subscript(id: ItemID) -> Stream? { streams[id] }
    public var isEmpty: Bool { streams.isEmpty }
    /// Some stream's play is in progress.
    public var isPlaying: Bool { streams.values.contains(where: \.playing) }
    public var ids: Set<ItemID> { Set(streams.keys) }
    /// Every stream, by arrival.
    public var all: [Stream] {
        streams.values.sorted { ($0.item.arrival, $0.item.id) < ($1.item.arrival, $1.item.id) }
    }

    /// Takes `item` in, not playing yet: `play`, `wait` or `end` follows.
    public mutating func add(_ item: QueueItem, alert: Bool) {
        streams[item.id] = Stream(item: item, isAlert: alert)
    }

    /// Plays a stream that does not play.
    public mutating func play(_ id: ItemID) -> [MixedLaneEffect] {
        guard var stream = streams[id], !stream.playing else { return [] }
        stream.playing = true
        stream.waiting = nil
        stream.frames = 0
        streams[id] = stream
        return [.play(stream.item, alert: stream.isAlert)]
    }

    /// A session interrupted it: its play (if any) stops and it waits.
    public mutating func interrupt(_ id: ItemID) -> [MixedLaneEffect] {
        guard streams[id] != nil else { return [] }
        streams[id]?.waiting = .interrupted
        return stop(id, intent: .interrupt)
    }

    /// Ends it for good with `outcome`: at once when it does not play, else after its stop.
    public mutating func end(_ id: ItemID, _ outcome: Outcome) -> [MixedLaneEffect] {
        guard let stream = streams[id] else { return [] }
        if stream.playing { return stop(id, intent: .end(outcome)) }
        streams[id] = nil
        return [.finish(stream.item, outcome)]
    }

    /// Ends every stream that `matches` with `outcome`, by arrival.
    public mutating func end(where matches: (QueueItem) -> Bool, _ outcome: Outcome) -> [MixedLaneEffect] {
        all.filter { matches($0.item) }.flatMap { end($0.item.id, outcome) }
    }

    /// The daemon is stopping: every play stops and keeps what was heard.
    public mutating func stopAll() -> [MixedLaneEffect] {
        all.filter(\.playing).flatMap { stop($0.item.id, intent: .interrupt) }
    }

    /// `announce resume` or the end of an interruption: a stream paused by it goes on.
    public mutating func resume(_ id: ItemID) -> [MixedLaneEffect] {
        streams[id]?.waiting == .interrupted ? play(id) : []
    }

    /// Frames heard in the play in progress; `counted`, the exact length once known.
    public mutating func progress(_ id: ItemID, frames: Int64, counted: Int64?) {
        guard streams[id] != nil else { return }
        if let counted { streams[id]?.item.totalFrames = counted }
        streams[id]?.frames = frames
    }

    /// A play ended: `heard` frames in it, the program's `total` when known. `mayPlay`: the
    /// session policy lets it play now. `waitsForDevice` is asked (with the item as heard so
    /// far) only for a failure that is not an end the daemon asked for: true when a busy or lost
    /// device is waited for. `stopping`: the daemon is going down; a stopped stream keeps its place.
    public mutating func playEnded(
        _ id: ItemID, heard: Int64, total: Int64?, end: PlaybackEnd, mayPlay: Bool,
        stopping: Bool, waitsForDevice: (QueueItem) -> Bool
    ) -> [MixedLaneEffect] {
        guard var stream = streams[id] else { return [] }
        stream.playing = false
        let (sum, overflow) = stream.item.heardFrames.addingReportingOverflow(max(0, heard))
        stream.item.heardFrames = overflow ? .max : sum
        if let total { stream.item.totalFrames = total }
        let intent = stream.stopIntent
        stream.stopIntent = nil
        streams[id] = stream
        let persist: [MixedLaneEffect] = stream.isAlert ? [] : [.persist(stream.item)]
        switch (end, intent) {
        case (_, .end(let outcome)?):
            return self.end(id, outcome)
        case (.finished, _):
            return self.end(id, .played)
        case (.stopped, _), (.held, _):
            // Interrupted (or the daemon is stopping): it keeps what was heard and waits.
            if stopping { return persist }
            if mayPlay { return persist + play(id) }
            streams[id]?.waiting = .interrupted
            return persist
        case (.failed(let code, let message), _):
            guard waitsForDevice(stream.item) else {
                return self.end(id, Outcome(.failed, reason: message, code: code))
            }
            // Waits for the device, unless an interruption keeps it paused anyway.
            streams[id]?.waiting = intent == .interrupt || !mayPlay ? .interrupted : .device
            return [.suspend(id: id)] + persist
        case (.silenced(let reason), _):
            return self.end(id, Outcome(.silenced, reason: reason))
        }
    }

    /// The device is tried again: each stream waiting for it plays, unless its `--expire`
    /// passed before anything was heard, or a session keeps it paused (`held`).
    public mutating func retryDevice(now: Double, held: (ItemID) -> Bool) -> [MixedLaneEffect] {
        var effects: [MixedLaneEffect] = []
        for stream in all where stream.waiting == .device {
            let id = stream.item.id
            if stream.item.heardFrames == 0, let expire = stream.item.expireAfter, stream.item.arrival + expire <= now {
                let seconds = expire == expire.rounded() ? String(Int64(expire)) : String(expire)
                effects += end(id, Outcome(.expired, reason: "not started within \(seconds)s"))
            } else if held(id) {
                streams[id]?.waiting = .interrupted
            } else {
                effects += play(id)
            }
        }
        return effects
    }

    private mutating func stop(_ id: ItemID, intent: StopIntent) -> [MixedLaneEffect] {
        guard streams[id]?.playing == true else { return [] }
        streams[id]?.stopIntent = intent
        return [.stop(id: id)]
    }
}
