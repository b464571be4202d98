/// Where a reshaping source (tempo, skipped silence) is in the source under it: frames it gave
/// out mapped back to frames it read, so that what the engine counts (frames written) becomes
/// source time for resume points, progress, lengths and the drop-after fraction.
///
/// Two maps, composed. Kept to source: silence cut is a jump in the source at the kept frame
/// where it was cut (exact). Output to kept: the tempo stage's output follows its input at
/// `tempo`, but libsonic rounds each splice to whole frames, so its real speed is off by up to
/// half a percent, which over an hour is seconds. So each time the stage is read its own count
/// is observed (output given for input taken, less what it still holds) and the map goes on
/// from there: the error stays that of one observation (milliseconds), whatever the length.
public struct ReshapedTimeline: Sendable {
    /// Kept frames per output frame between observations.
    public let tempo: Double
    /// How far behind the latest output a question may come, in frames: what the engine still
    /// holds (its ring and the device's buffer, seconds). Older anchors are forgotten.
    public let memory: Int64
    /// Source frames read and accounted for, kept or cut, in source order.
    public private(set) var read: Int64 = 0
    /// Of those, the ones kept (given to the tempo stage).
    public private(set) var kept: Int64 = 0

    private struct Anchor: Sendable {
        var from: Int64
        var to: Int64
    }
    /// Kept frame → source frame where silence was cut; at equal `from` the later one wins.
    private var cuts = [Anchor(from: 0, to: 0)]
    /// Output frame → kept frame where the tempo stage's count was observed.
    private var observed = [Anchor(from: 0, to: 0)]

    public init(tempo: Double, memory: Int64) {
        precondition(tempo > 0 && tempo.isFinite, "a tempo is a positive factor")
        self.tempo = tempo
        self.memory = memory
    }

    /// `frames` source frames, next in order, go on to be played.
    public mutating func keep(_ frames: Int64) {
        read += frames
        kept += frames
    }

    /// `frames` source frames, next in order, are left out (silence) where the kept ones stand.
    public mutating func cut(_ frames: Int64) {
        guard frames > 0 else { return }
        read += frames
        Self.append(Anchor(from: kept, to: read), to: &cuts, horizon: kept - Int64(Double(memory) * tempo))
    }

    /// The tempo stage has given `output` frames in all for the kept frames up to `kept`
    /// (nil: all of them, when it was flushed or emptied).
    public mutating func observe(output: Int64, kept: Int64? = nil) {
        let last = observed[observed.count - 1]
        let at = Anchor(from: max(output, last.from), to: max(last.to, min(kept ?? self.kept, self.kept)))
        Self.append(at, to: &observed, horizon: at.from - memory)
    }

    /// Source frames behind the first `output` frames given out.
    public func sourceFrames(forOutput output: Int64) -> Int64 {
        let (anchor, next) = Self.lookup(output, in: observed)
        var keptFrames = anchor.to + Int64((Double(output - anchor.from) * tempo).rounded())
        keptFrames = max(anchor.to, min(keptFrames, next?.to ?? kept))
        let (cut, nextCut) = Self.lookup(keptFrames, in: cuts)
        let source = cut.to + (keptFrames - cut.from)
        return min(source, nextCut?.to ?? read)
    }

    /// The last anchor at or before `position`, and the one after it.
    private static func lookup(_ position: Int64, in anchors: [Anchor]) -> (Anchor, Anchor?) {
        var low = 0
        var high = anchors.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if anchors[middle].from <= position { low = middle } else { high = middle }
        }
        return (anchors[low], low + 1 < anchors.count ? anchors[low + 1] : nil)
    }

    private static func append(_ anchor: Anchor, to anchors: inout [Anchor], horizon: Int64) {
        anchors.append(anchor)
        // Forgotten in batches, once half are past the horizon: a clip playing for hours, or
        // looping forever, keeps adding anchors.
        guard anchors.count > 1024, anchors[anchors.count / 2].from < horizon else { return }
        let stale = anchors.prefix { $0.from < horizon }.count
        anchors.removeFirst(stale - 1)  // the last of them still covers the horizon
    }
}
