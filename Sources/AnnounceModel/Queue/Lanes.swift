/// Both lanes behind one interface (DESIGN §2, §3): the main lane (`Scheduler`: one item plays
/// at a time, by priority; the others wait) and the mixed lane (`MixedLane`: mixable sessions
/// and alerts, each starting at once over it). Which lane an id is on, and its item, are asked
/// here rather than of each lane in turn. Pure, like the lanes.
public struct Lanes: Sendable {
    public var main: Scheduler
    public var mixed = MixedLane()
    /// The main-lane item the scheduler preempted for each id about to play.
    public var preemptedFor: [ItemID: ItemID] = [:]

    public init(main: Scheduler = Scheduler()) { self.main = main }

    /// Whether `id` is a stream of the mixed lane.
    public func isMixed(_ id: ItemID) -> Bool { mixed[id] != nil }

    /// A playing item: a mixed stream (playing, or waiting in the lane), or the main lane's.
    public func playing(_ id: ItemID) -> QueueItem? {
        if let stream = mixed[id] { return stream.item }
        if let playing = main.playing, playing.id == id { return playing }
        return nil
    }

    /// Any live item, also one waiting in the main lane's queue.
    public func item(_ id: ItemID) -> QueueItem? {
        playing(id) ?? main.ready.first { $0.id == id } ?? main.scheduled.first { $0.id == id }
    }

    /// Every live item: playing, waiting in the main lane's queue or its schedule, or mixing.
    public var live: [QueueItem] {
        [main.playing].compactMap { $0 } + main.ready + main.scheduled + mixed.all.map(\.item)
    }

    /// The items on the engines now: the main lane's and every mixed stream that plays.
    public var onEngines: [QueueItem] {
        [main.playing].compactMap { $0 } + mixed.all.filter(\.playing).map(\.item)
    }

    /// `ids` split by lane: the mixed lane's, and the rest (the main lane's, or unknown).
    public func split(_ ids: [ItemID]) -> (mixed: [ItemID], rest: [ItemID]) {
        (ids.filter(isMixed), ids.filter { !isMixed($0) })
    }
}
