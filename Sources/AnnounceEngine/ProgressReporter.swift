import AnnounceModel

/// Calls back on each progress tick the playback thread publishes, and at the end.
struct ProgressReporter {
    private(set) var total: Int64?
    private var totalIsFinal = false
    let sampleRate: Int
    /// Device frames to the file's.
    let sourceFrames: (Int) -> Int64
    let callback: ((PlaybackProgress) -> Void)?
    /// Device frames heard before the clip's own (the wake-up silence): it starts after them.
    let startsAfter: Int
    private(set) var seenTicks = 0
    private var lastFrames: Int64?

    init(
        total: Int64?, sampleRate: Int, sourceFrames: @escaping (Int) -> Int64, callback: ((PlaybackProgress) -> Void)?,
        startsAfter: Int = 0
    ) {
        self.total = total
        self.sampleRate = sampleRate
        self.sourceFrames = sourceFrames
        self.callback = callback
        self.startsAfter = startsAfter
    }

    mutating func report(_ job: PlaybackJob) {
        guard let callback else { return }
        let ticks = job.progressTicks.load(ordering: .acquiring)
        guard ticks != seenTicks || job.isDone.load(ordering: .acquiring) else { return }
        seenTicks = ticks
        let heard = job.framesPlayed.load(ordering: .acquiring)
        let played = sourceFrames(heard)
        guard played != lastFrames else { return }
        lastFrames = played
        let started = startsAfter == 0 ? ticks > 0 || played > 0 : heard > startsAfter
        callback(
            PlaybackProgress(
                framesPlayed: played, totalFrames: total, sampleRate: sampleRate,
                started: started, totalIsFinal: totalIsFinal))
    }

    /// Every frame has been decoded: the play lasts `total`, whatever the header said.
    mutating func inputEnded(total: Int64) {
        self.total = total
        totalIsFinal = true
        lastFrames = nil  // the next report carries it even at the same position
    }
}
