import HeapModule

/// The priority queue and its rules (DESIGN §2), as pure logic: every call gets the time as `now`
/// and answers with the effects the daemon must carry out, in order.
///
/// `entries` is the source of truth for every item that is not final. The three heaps only index it
/// and are cleaned lazily: an entry whose item is gone, has moved on, or was re-enqueued under the same
/// id (a different sequence) is skipped when it reaches the top. Every public mutating call ends by
/// dropping stale tops, so `nextDeadline` can read the tops as they are.
public struct Scheduler: Sendable {
    private var entries: [ItemID: Entry] = [:]
    private var readyHeap = Heap<ReadyKey>()
    private var scheduledHeap = Heap<TimedKey>()
    private var expiryHeap = Heap<TimedKey>()
    private var playingID: ItemID?
    /// Why the playing item is being stopped; set from the `stopPlayback` effect until `playbackEnded`.
    private var pendingStop: StopReason?

    /// Next sequence number to hand out (max restored + 1, or 1).
    public private(set) var nextSequence: UInt64
    public private(set) var isPaused = false
    /// Why the main lane is held apart from a user's pause: the device is busy or lost, or a
    /// session interrupted the lane (DESIGN §3). Nothing starts while any is held.
    public private(set) var holds: Set<QueueHold> = []

    /// Restores spooled items (any order): they keep id, sequence, heardFrames, started, interrupted.
    /// Nothing plays until the first `advance(now:)`.
    public init(restoring items: [QueueItem] = []) {
        nextSequence = (items.map(\.sequence).max() ?? 0) &+ 1
        for item in items where entries[item.id] == nil {
            // No clock here: anything with an eligibility time waits for the first advance to release it.
            admit(item, now: nil)
        }
        pruneHeapTops()
    }

    // MARK: - Reading

    /// The item playing now (also while it is being stopped), if any.
    public var playing: QueueItem? { playingID.flatMap { entries[$0]?.item } }

    /// A stop was requested for the playing item and playbackEnded has not come yet.
    var isStopping: Bool { pendingStop != nil }

    /// Earliest time `advance(now:)` has something to do (eligibility or expiry); nil when none.
    public var nextDeadline: Double? {
        [scheduledHeap.min?.time, expiryHeap.min?.time].compactMap { $0 }.min()
    }

    /// Ready items in play order.
    public var ready: [QueueItem] {
        entries.values.filter { $0.place == .ready }.map(\.item).sorted { ReadyKey($0) < ReadyKey($1) }
    }

    /// `ready.first` without sorting them all (for what runs at each wake): the live top of the heap, else a scan.
    public var nextReady: QueueItem? {
        if let top = readyHeap.min, top.indexes(entries[top.id]) { return entries[top.id]?.item }
        return entries.values.lazy.filter { $0.place == .ready }.map(\.item).min { ReadyKey($0) < ReadyKey($1) }
    }

    /// Scheduled items by eligibility time.
    public var scheduled: [QueueItem] {
        entries.values.filter { $0.place == .scheduled }.map(\.item).sorted {
            Self.eligibleKey($0) < Self.eligibleKey($1)
        }
    }

    /// Every item not yet final, including the playing one.
    public var count: Int { entries.count }

    // MARK: - Commands

    /// Accepts a new item and gives it the next sequence. Effects: `.persist(item)` first, always (the
    /// daemon spools before it acknowledges); with `replace` and a tag, the waiting items with that tag
    /// finish `replaced` and a playing one is stopped with `.replaced`; then what `advance(now:)` does.
    /// An id that is already live is ignored (returns []): the first item with it keeps its place.
    public mutating func enqueue(_ item: QueueItem, replace: Bool = false, now: Double) -> [SchedulerEffect] {
        guard entries[item.id] == nil else { return [] }
        defer { pruneHeapTops() }
        var item = item
        item.sequence = nextSequence
        nextSequence &+= 1

        var effects: [SchedulerEffect] = [.persist(item)]
        if replace, let tag = item.tag {
            let outcome = Outcome(.replaced, reason: "replaced by \(item.id)")
            // A tag is its owner's (the system queue's users each have their own).
            for old in waitingItems(where: { $0.tag == tag && $0.owner?.uid == item.owner?.uid }) {
                finish(old, outcome, into: &effects)
            }
            if let playing, playing.tag == tag, playing.owner?.uid == item.owner?.uid {
                requestStop(.replaced(by: item.id), into: &effects)
            }
        }
        admit(item, now: now)
        runTimersAndStart(now: now, into: &effects)
        return effects
    }

    /// Releases scheduled items whose `eligibleAt <= now`, expires unstarted items whose `expiresAt <= now`,
    /// then plays the best ready item when idle and not paused, or stops the playing one when the best
    /// ready item outranks it strictly, interrupts, and the playing one is not critical.
    public mutating func advance(now: Double) -> [SchedulerEffect] {
        defer { pruneHeapTops() }
        var effects: [SchedulerEffect] = []
        runTimersAndStart(now: now, into: &effects)
        return effects
    }

    /// The current play ended; `heardFrames` were heard during this play, `totalFrames` is the
    /// program length when known. `.finished`, `.failed` and `.silenced` are final whatever stop was pending
    /// (`.silenced` is how the daemon declines a `.play` in quiet mode: the item ends `silenced`
    /// and the next one is offered);
    /// `.stopped` ends the item by the pending reason: preempted items are dropped (heard fraction
    /// at least `dropAfter`, or `onInterrupt == .drop`) or requeued at the head of their class, paused
    /// ones are requeued to resume. Then as `advance(now:)`. Ignores an id that is not the playing one.
    public mutating func playbackEnded(
        id: ItemID, heardFrames: Int64, totalFrames: Int64?, heardFraction: Double? = nil,
        end: PlaybackEnd, now: Double
    ) -> [SchedulerEffect] {
        guard playingID == id, var item = entries[id]?.item else { return [] }
        defer { pruneHeapTops() }
        let stopReason = pendingStop
        playingID = nil
        pendingStop = nil
        let (heard, overflowed) = item.heardFrames.addingReportingOverflow(max(0, heardFrames))
        item.heardFrames = overflowed ? .max : heard
        if let totalFrames { item.totalFrames = totalFrames }
        item.heardFraction = heardFraction

        var effects: [SchedulerEffect] = []
        switch end {
        case .finished:
            finish(item, .played, into: &effects)
        case .failed(let code, let message):
            finish(item, Outcome(.failed, reason: message, code: code), into: &effects)
        case .silenced(let reason):
            finish(item, Outcome(.silenced, reason: reason), into: &effects)
        case .held(let reason):
            // It could not go on for a reason outside the queue: back to the head of its
            // class, keeping what was heard; the queue waits until the hold is released.
            holds.insert(reason)
            if item.heardFrames == 0 {
                // Nothing was heard (the device was busy at open): it has not really started,
                // so its --expire still bounds the wait.
                item.started = false
                if let expiresAt = item.expiresAt, expiresAt.isFinite {
                    expiryHeap.insert(TimedKey(time: expiresAt, sequence: item.sequence, id: item.id))
                }
            }
            requeue(item, reason: .held(reason), into: &effects)
        case .stopped:
            switch stopReason {
            case .preempted(by: let preemptor)?:
                endPreempted(item, by: preemptor, into: &effects)
            case .paused?, nil:
                // Without a recorded reason (should not happen) nothing is lost: it resumes later.
                requeue(item, reason: .paused, into: &effects)
            case .held(let reason)?:
                requeue(item, reason: .held(reason), into: &effects)
            case .skipped?:
                finish(item, Outcome(.cancelled, reason: "skipped"), into: &effects)
            case .cancelled?:
                finish(item, .cancelled, into: &effects)
            case .replaced(by: let newer)?:
                finish(item, Outcome(.replaced, reason: "replaced by \(newer)"), into: &effects)
            case .stopped?:
                finish(item, .stopped, into: &effects)
            }
        }
        runTimersAndStart(now: now, into: &effects)
        return effects
    }

    /// Cancels items by id; returns the ids that were not found (already final or unknown).
    public mutating func cancel(ids: [ItemID], now: Double) -> (effects: [SchedulerEffect], unknown: [ItemID]) {
        defer { pruneHeapTops() }
        var effects: [SchedulerEffect] = []
        var unknown: [ItemID] = []
        for id in ids {
            guard let entry = entries[id] else {
                unknown.append(id)
                continue
            }
            if entry.place == .playing {
                requestStop(.cancelled, into: &effects)
            } else {
                finish(entry.item, .cancelled, into: &effects)
            }
        }
        return (effects, unknown)
    }

    /// Cancels every item with this tag of `owner`'s (nil: the items without one, a user's own
    /// daemon's): waiting ones in list order, then the playing one.
    public mutating func cancel(tag: String, owner: UInt32? = nil, now: Double) -> [SchedulerEffect] {
        defer { pruneHeapTops() }
        var effects: [SchedulerEffect] = []
        for item in waitingItems(where: { $0.tag == tag && $0.owner?.uid == owner }) {
            finish(item, .cancelled, into: &effects)
        }
        if let playing, playing.tag == tag, playing.owner?.uid == owner {
            requestStop(.cancelled, into: &effects)
        }
        return effects
    }

    /// Ends the playing item as cancelled/"skipped"; the next one plays when its playback has ended.
    public mutating func skip(now: Double) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        requestStop(.skipped, into: &effects)
        return effects
    }

    /// Holds the queue; the playing item is stopped and will resume where it was heard to.
    public mutating func pause(now: Double) -> [SchedulerEffect] {
        isPaused = true
        var effects: [SchedulerEffect] = []
        requestStop(.paused, into: &effects)
        return effects
    }

    /// Holds the queue for `reason` (not a user's pause: `resume` does not lift it); the playing
    /// item is stopped and resumes where it was heard once every hold is released.
    public mutating func hold(_ reason: QueueHold, now: Double) -> [SchedulerEffect] {
        holds.insert(reason)
        var effects: [SchedulerEffect] = []
        requestStop(.held(reason), into: &effects)
        return effects
    }

    /// Lifts one hold; the queue goes on when none is left and it is not paused.
    public mutating func release(_ reason: QueueHold, now: Double) -> [SchedulerEffect] {
        holds.remove(reason)
        return advance(now: now)
    }

    /// Lets the queue go on.
    public mutating func resume(now: Double) -> [SchedulerEffect] {
        isPaused = false
        return advance(now: now)
    }

    /// Cancels every queued and scheduled item ("cleared"); the playing one goes on.
    public mutating func clear(now: Double) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        for item in waitingItems(where: { _ in true }) {
            finish(item, Outcome(.cancelled, reason: "cleared"), into: &effects)
        }
        // Only the playing item is left, and it has no live heap entry.
        readyHeap = Heap()
        scheduledHeap = Heap()
        expiryHeap = Heap()
        return effects
    }

    /// clear, then stop the playing item.
    public mutating func stop(now: Double) -> [SchedulerEffect] {
        var effects = clear(now: now)
        requestStop(.stopped, into: &effects)
        return effects
    }

    // MARK: - Rules

    private mutating func runTimersAndStart(now: Double, into effects: inout [SchedulerEffect]) {
        releaseEligible(now: now)
        expireOverdue(now: now, into: &effects)
        startOrPreempt(into: &effects)
    }

    private mutating func releaseEligible(now: Double) {
        while let due = scheduledHeap.min, due.time <= now {
            scheduledHeap.removeMin()
            guard due.schedules(entries[due.id]), var entry = entries[due.id] else { continue }
            entry.place = .ready
            entries[due.id] = entry
            readyHeap.insert(ReadyKey(entry.item))
        }
    }

    private mutating func expireOverdue(now: Double, into effects: inout [SchedulerEffect]) {
        while let due = expiryHeap.min, due.time <= now {
            expiryHeap.removeMin()
            guard due.expires(entries[due.id]), let item = entries[due.id]?.item else { continue }
            let seconds = Self.secondsText(item.expireAfter ?? 0)
            finish(item, Outcome(.expired, reason: "not started within \(seconds)s"), into: &effects)
        }
    }

    private mutating func startOrPreempt(into effects: inout [SchedulerEffect]) {
        pruneReadyTop()
        guard let bestKey = readyHeap.min, let best = entries[bestKey.id]?.item else { return }
        if let playingID {
            guard pendingStop == nil, let playing = entries[playingID]?.item else { return }
            if best.priority > playing.priority, best.interrupts, playing.priority != .critical {
                requestStop(.preempted(by: best.id), into: &effects)
            }
        } else if !isPaused && holds.isEmpty {
            readyHeap.removeMin()
            var item = best
            item.started = true
            item.interrupted = false
            entries[item.id] = Entry(item: item, place: .playing)
            playingID = item.id
            effects.append(.play(item))
        }
    }

    /// The preempted item is dropped when enough was heard or it asks to be; otherwise it goes back.
    private mutating func endPreempted(_ item: QueueItem, by preemptor: ItemID, into effects: inout [SchedulerEffect]) {
        var item = item
        if let fraction = item.heardFraction
            ?? item.totalFrames.flatMap({ $0 > 0 ? Double(item.heardFrames) / Double($0) : nil })
        {
            let fraction = min(1, fraction)
            if fraction >= item.dropAfter {
                // The epsilon keeps 0.85 from printing as 84%.
                let percent = Int((fraction * 100 + 1e-9).rounded(.down))
                finish(
                    item, Outcome(.dropped, reason: "preempted by \(preemptor) after \(percent)% heard"), into: &effects
                )
                return
            }
        }
        switch item.onInterrupt {
        case .drop:
            finish(item, Outcome(.dropped, reason: "preempted by \(preemptor)"), into: &effects)
        case .restart:
            item.heardFrames = 0
            requeue(item, reason: .preempted(by: preemptor), into: &effects)
        case .resume:
            requeue(item, reason: .preempted(by: preemptor), into: &effects)
        }
    }

    /// Puts an interrupted item back with its original sequence, at the head of its class.
    private mutating func requeue(_ item: QueueItem, reason: StopReason, into effects: inout [SchedulerEffect]) {
        var item = item
        item.interrupted = true
        entries[item.id] = Entry(item: item, place: .ready)
        readyHeap.insert(ReadyKey(item))
        effects.append(.interrupted(item, reason: reason))
        effects.append(.persist(item))
    }

    /// Asks for the playing item to stop, once. A pending preempt/pause gives way to a final reason
    /// (cancel, replace, skip, stop), and the first final reason wins; neither emits a second stop.
    private mutating func requestStop(_ reason: StopReason, into effects: inout [SchedulerEffect]) {
        guard let playingID else { return }
        if let pending = pendingStop {
            if !pending.isFinal, reason.isFinal { pendingStop = reason }
            return
        }
        pendingStop = reason
        effects.append(.stopPlayback(id: playingID, reason: reason))
    }

    private mutating func finish(_ item: QueueItem, _ outcome: Outcome, into effects: inout [SchedulerEffect]) {
        entries[item.id] = nil
        effects.append(.finish(item, outcome))
    }

    // MARK: - Bookkeeping

    private mutating func admit(_ item: QueueItem, now: Double?) {
        if let eligibleAt = item.eligibleAt, eligibleAt.isFinite, !item.started, now.map({ eligibleAt > $0 }) ?? true {
            entries[item.id] = Entry(item: item, place: .scheduled)
            scheduledHeap.insert(TimedKey(time: eligibleAt, sequence: item.sequence, id: item.id))
        } else {
            entries[item.id] = Entry(item: item, place: .ready)
            readyHeap.insert(ReadyKey(item))
        }
        // Non-finite times would break the heap's order; they mean "never".
        if !item.started, let expiresAt = item.expiresAt, expiresAt.isFinite {
            expiryHeap.insert(TimedKey(time: expiresAt, sequence: item.sequence, id: item.id))
        }
    }

    /// Waiting (ready, then scheduled) items that match, in the order `ready` and `scheduled` list them.
    private func waitingItems(where matches: (QueueItem) -> Bool) -> [QueueItem] {
        ready.filter(matches) + scheduled.filter(matches)
    }

    private mutating func pruneReadyTop() {
        while let top = readyHeap.min, !top.indexes(entries[top.id]) { readyHeap.removeMin() }
    }

    private mutating func pruneHeapTops() {
        pruneReadyTop()
        while let top = scheduledHeap.min, !top.schedules(entries[top.id]) { scheduledHeap.removeMin() }
        while let top = expiryHeap.min, !top.expires(entries[top.id]) { expiryHeap.removeMin() }
    }
}
