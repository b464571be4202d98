import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// `--skip-silence` on the decode side, frame by frame: a frame is silent when every channel is
/// below the rule's level. Silence before the first sound of a pass is cut; a pause inside is
/// held (at most `SilenceRule.gap` of it, the latest part: a longer one loses its beginning) and
/// played once sound follows; what is held when the pass ends (trailing silence) is cut. Every
/// frame is accounted for, kept or cut, in the timeline, in source order.
final class SilenceSkipper {
    private let channels: Int
    private let threshold: Float
    /// The latest part of the current pause, a ring of `capacity` frames.
    private let held: UnsafeMutablePointer<Float>
    private let capacity: Int
    private var heldStart = 0
    private var heldCount = 0
    /// Frames cut and not yet told to the timeline (told before anything later is kept).
    private var pendingCut: Int64 = 0
    /// No sound yet in this pass: silence is leading silence.
    private var leading = true

    /// Held silence is bounded in bytes too (16 MiB): a 10 s gap of 32 channels at 768 kHz
    /// would otherwise take 1 GB. No real pause comes near it; past it the pause kept is shorter.
    static let maxHeldBytes = 16 << 20

    init(channels: Int, sampleRate: Int, rule: SilenceRule) {
        self.channels = channels
        threshold = Float(pow(10, rule.level / 20))
        let frames = Int((rule.gap * Double(sampleRate)).rounded())
        capacity = max(1, min(frames, Self.maxHeldBytes / (channels * MemoryLayout<Float>.size)))
        held = .allocate(capacity: capacity * channels)
    }

    deinit { held.deallocate() }

    /// Takes `frames` frames of `input`; the kept ones go to `emit`, in order.
    func process(
        _ input: UnsafePointer<Float>, frames: Int, timeline: inout ReshapedTimeline,
        emit: (UnsafePointer<Float>, Int) throws(AnnounceError) -> Void
    ) throws(AnnounceError) {
        var soundStart = 0  // the run of sound not yet emitted begins here
        for index in 0..<frames {
            let frame = input + index * channels
            if isSilent(frame) {
                if soundStart < index {
                    timeline.keep(Int64(index - soundStart))
                    try emit(input + soundStart * channels, index - soundStart)
                }
                soundStart = index + 1
                if leading { pendingCut += 1 } else { hold(frame) }
                continue
            }
            leading = false
            if pendingCut > 0 || heldCount > 0 { try release(timeline: &timeline, emit: emit) }
        }
        if soundStart < frames {
            timeline.keep(Int64(frames - soundStart))
            try emit(input + soundStart * channels, frames - soundStart)
        }
    }

    /// The pass is over: what is held is trailing silence, and the next pass starts afresh.
    func endPass(timeline: inout ReshapedTimeline) {
        timeline.cut(pendingCut + Int64(heldCount))
        (pendingCut, heldStart, heldCount, leading) = (0, 0, 0, true)
    }

    private func isSilent(_ frame: UnsafePointer<Float>) -> Bool {
        for channel in 0..<channels where !(abs(frame[channel]) < threshold) { return false }
        return true
    }

    /// Keeps the frame as the latest of the pause; a full ring cuts its oldest.
    private func hold(_ frame: UnsafePointer<Float>) {
        if heldCount == capacity {
            pendingCut += 1
            heldStart = (heldStart + 1) % capacity
            heldCount -= 1
        }
        (held + ((heldStart + heldCount) % capacity) * channels).update(from: frame, count: channels)
        heldCount += 1
    }

    /// Sound follows the pause: what was cut of it is told, and what is held plays.
    private func release(
        timeline: inout ReshapedTimeline,
        emit: (UnsafePointer<Float>, Int) throws(AnnounceError) -> Void
    ) throws(AnnounceError) {
        timeline.cut(pendingCut)
        pendingCut = 0
        guard heldCount > 0 else { return }
        timeline.keep(Int64(heldCount))
        let first = min(heldCount, capacity - heldStart)
        try emit(held + heldStart * channels, first)
        if first < heldCount { try emit(held, heldCount - first) }
        (heldStart, heldCount) = (0, 0)
    }
}
