import AnnounceModel

/// What the control side knows of plays from the engine driver's reports: each item's sample
/// rate (to say frames as seconds), the main lane's frames heard and length in the play in
/// progress, the quarter marks already announced, and how each item's last play went (for its
/// finished event). Bookkeeping only: it decides nothing (whether a start is announced is
/// `ItemLifecycle`'s).
struct PlayMeter {
    /// The main lane's playing item in this play: its length once known, and frames heard.
    var playingTotal: Int64?
    var playingFrames: Int64 = 0
    private var rates: [ItemID: Int] = [:]
    private var marks: [ItemID: Int] = [:]
    private var lastPlays: [ItemID: PlayDetails] = [:]
    /// Live streams' titles now (`status`); kept across an item's interruptions.
    private(set) var titles: [ItemID: String] = [:]
    /// The main lane's item whose position was last written to the spool mid-play, and when.
    private var checkpoint: (id: ItemID, time: Double)?

    /// How often a playing item's position goes to the spool, in seconds of wall time: a daemon
    /// killed mid-play resumes it from there (speech: that sentence), not from its last
    /// interruption. Wall time, so an unpaced device's hour a second costs no more writes.
    static let checkpointInterval = 5.0

    /// Frames as seconds, to the millisecond; nil until the item's sample rate is known.
    func seconds(_ frames: Int64?, of id: ItemID) -> Double? {
        guard let frames, let rate = rates[id], rate > 0 else { return nil }
        return (Double(frames) / Double(rate) * 1000).rounded() / 1000
    }

    /// A play of `id` began at `rate`.
    mutating func started(_ id: ItemID, rate: Int) {
        rates[id] = rate
    }

    /// A play of `id` ended; `details` say how.
    mutating func ended(_ id: ItemID, rate: Int?, details: PlayDetails) {
        if let rate { rates[id] = rate }
        lastPlays[id] = details
    }

    /// The quarter mark (25, 50 or 75) that `heard` of `total` frames reaches first now, else 0.
    mutating func newMark(_ id: ItemID, heard: Int64, total: Int64?) -> Int {
        guard let total, total > 0 else { return 0 }
        let percent = Int(heard * 100 / total)
        let mark = [75, 50, 25].first { percent >= $0 } ?? 0
        guard mark > marks[id, default: 0] else { return 0 }
        marks[id] = mark
        return mark
    }

    /// Whether the main lane's `id`, playing at `now`, is due to have its position spooled.
    mutating func checkpointDue(_ id: ItemID, now: Double) -> Bool {
        guard let checkpoint, checkpoint.id == id else {
            self.checkpoint = (id, now)
            return false
        }
        guard now - checkpoint.time >= Self.checkpointInterval else { return false }
        self.checkpoint = (id, now)
        return true
    }

    /// A live stream's title changed; false when it is the one kept.
    mutating func setTitle(_ title: String?, of id: ItemID) -> Bool {
        defer { titles[id] = title }
        return titles[id] != title
    }

    /// How `id`'s last play went, if it played.
    func lastPlay(of id: ItemID) -> PlayDetails? { lastPlays[id] }

    /// `id` is final: what was kept of it goes.
    mutating func forget(_ id: ItemID) {
        rates[id] = nil
        marks[id] = nil
        lastPlays[id] = nil
        titles[id] = nil
    }
}
