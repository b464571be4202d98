/// The scheduler's keys and small helpers: the queue's entries, the heaps' orders, and which
/// stop reasons are final.
extension Scheduler {
    /// Where a live item is.
    enum Place: Sendable {
        case ready, scheduled, playing
    }

    /// The item lives in a box of its own: a dictionary keeps room for more entries than it
    /// holds, and a 600-byte value inline made each queued item cost ~1.4 KB.
    struct Entry: Sendable {
        private var box: ItemBox
        var place: Place

        init(item: QueueItem, place: Place) {
            box = ItemBox(item)
            self.place = place
        }

        var item: QueueItem {
            get { box.item }
            _modify {
                if !isKnownUniquelyReferenced(&box) { box = ItemBox(box.item) }
                yield &box.item
            }
        }
    }

    /// Copied on write: a scheduler is a value.
    final class ItemBox: @unchecked Sendable {
        var item: QueueItem
        init(_ item: QueueItem) { self.item = item }
    }

    /// Play order; the heap's min is the item to play next.
    struct ReadyKey: Comparable, Sendable {
        var priority: Priority
        /// Interrupted items go back to the head of their priority class, even ahead of items that
        /// arrived earlier but became eligible (`--at`) while they played.
        var resumesFirst: Bool
        var sequence: UInt64
        var id: ItemID

        init(_ item: QueueItem) {
            priority = item.priority
            resumesFirst = item.interrupted
            sequence = item.sequence
            id = item.id
        }

        /// The heap's key still indexes this entry, ready as it was queued.
        func indexes(_ entry: Entry?) -> Bool {
            entry.map { $0.place == .ready && $0.item.sequence == sequence } ?? false
        }

        static func < (a: ReadyKey, b: ReadyKey) -> Bool {
            if a.priority != b.priority { return a.priority > b.priority }
            if a.resumesFirst != b.resumesFirst { return a.resumesFirst }
            if a.sequence != b.sequence { return a.sequence < b.sequence }
            return a.id < b.id
        }
    }

    /// A moment something happens to an item: it becomes eligible, or it expires.
    struct TimedKey: Comparable, Sendable {
        var time: Double
        var sequence: UInt64
        var id: ItemID

        static func < (a: TimedKey, b: TimedKey) -> Bool {
            if a.time != b.time { return a.time < b.time }
            if a.sequence != b.sequence { return a.sequence < b.sequence }
            return a.id < b.id
        }

        /// The scheduled heap's key still indexes this entry, waiting for its time.
        func schedules(_ entry: Entry?) -> Bool {
            entry.map { $0.place == .scheduled && $0.item.sequence == sequence } ?? false
        }

        /// The expiry heap's key still indexes this entry, not yet started.
        func expires(_ entry: Entry?) -> Bool {
            entry.map { $0.place != .playing && !$0.item.started && $0.item.sequence == sequence } ?? false
        }
    }

    static func eligibleKey(_ item: QueueItem) -> TimedKey {
        TimedKey(time: item.eligibleAt ?? item.arrival, sequence: item.sequence, id: item.id)
    }

    /// "5", "0.5": whole seconds without a fraction.
    static func secondsText(_ seconds: Double) -> String {
        if seconds.isFinite, seconds == seconds.rounded(), abs(seconds) < 1e15 { return String(Int64(seconds)) }
        return String(seconds)
    }
}

extension StopReason {
    /// Ends the item for good, as opposed to sending it back to the queue.
    var isFinal: Bool {
        switch self {
        case .preempted, .paused, .held: false
        case .skipped, .cancelled, .replaced, .stopped: true
        }
    }
}
