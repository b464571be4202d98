import Synchronization

/// How one clip is played (AVAudioPlayer's volume, pan, numberOfLoops, currentTime).
public struct PlaybackOptions: Equatable, Sendable {
    /// Linear gain; 1 leaves samples untouched.
    public var gain: Float = 1
    /// -1 full left … 1 full right. A mono clip with a pan plays in stereo.
    public var pan: Float = 0
    /// Extra passes after the first; -1 repeats until stopped.
    public var loops: Int = 0
    /// Where the first pass starts; later passes start at 0.
    public var start: TimeSpan?
    /// A linear ramp up from silence at the start (a resumed clip).
    public var fadeIn: TimeSpan?

    public init(gain: Float = 1, pan: Float = 0, loops: Int = 0, start: TimeSpan? = nil, fadeIn: TimeSpan? = nil) {
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.start = start
        self.fadeIn = fadeIn
    }
}

/// Published from frames actually played, never from a timer.
public struct PlaybackProgress: Equatable, Sendable {
    public var framesPlayed: Int64
    /// Frames this play will last; nil when looping forever or the length is unknown.
    public var totalFrames: Int64?
    public var sampleRate: Int
}

public struct PlaybackReport: Equatable, Sendable {
    public var framesPlayed: Int64
    public var outputFormat: OutputFormat
    /// Underruns and suspends the output recovered from during this clip.
    public var recoveries: Int
    /// The input ended early; what played is what decoded.
    public var truncationWarning: String?
    public var stopped: Bool
}

/// Plays clips one after another on one device. The caller's thread decodes
/// ahead into a ring; the playback thread writes to the device.
public final class PlaybackEngine {
    public typealias OutputOpener = (String, OutputRequest) throws(AnnounceError) -> any AudioOutput

    public let device: String
    private let openOutput: OutputOpener
    private let thread = PlaybackThread()
    private var output: (any AudioOutput)?
    /// The job playing now; `stop` reads it from other threads.
    private let current = Mutex<PlaybackJob?>(nil)
    /// Frames the decode side asks for per read.
    static let decodeChunkFrames = 8192
    /// How often progress is reported, in seconds of audio played.
    static let progressInterval = 0.1

    public init(device: String, openOutput: @escaping OutputOpener = { device, request throws(AnnounceError) in
        try ALSAOutput(device: device, request: request)
    }) {
        self.device = device
        self.openOutput = openOutput
    }

    deinit { thread.shutdown() }

    /// Plays `decoder` to the end (or until `stop`), returning what was heard.
    public func play(_ decoder: any AudioDecoder, options: PlaybackOptions = PlaybackOptions(),
                     control: PlaybackControl? = nil,
                     progress: ((PlaybackProgress) -> Void)? = nil) throws(AnnounceError) -> PlaybackReport {
        let info = decoder.info
        let startFrame = options.start.map { $0.frames(atRate: info.sampleRate) } ?? 0
        if let total = info.frames, startFrame >= total, startFrame > 0 {
            throw .usage("\(decoder.path): --start \(options.start!) is at or past the end (\(TimeSpan(seconds: info.durationSeconds ?? 0)))")
        }
        let output = try prepareOutput(for: info, pan: options.pan)
        let recoveriesBefore = output.recoveries  // the device may have played earlier clips
        if startFrame > 0 { try decoder.seek(toFrame: startFrame) }

        let ringFormat = decoder.readableFormats.contains(output.format.sampleFormat) ? output.format.sampleFormat : .float32
        // Two seconds (at most 4 MB): each side sleeps until half the ring is
        // free or filled, so the threads wake each other about once a second.
        let bytesPerFrame = ringFormat.bytesPerSample * info.channels
        let ring = PCMRing(capacityFrames: max(output.bufferFrames * 8, min(info.sampleRate * 2, (4 << 20) / bytesPerFrame)),
                           bytesPerFrame: bytesPerFrame)
        let processor = FrameProcessor(input: ringFormat, inputChannels: info.channels, output: output.format,
                                       maxFrames: output.bufferFrames, gain: options.gain, pan: options.pan,
                                       fadeInFrames: options.fadeIn.map { Int($0.frames(atRate: output.format.sampleRate)) } ?? 0)
        let progressStep = progress == nil ? 0 : Int(Double(info.sampleRate) * Self.progressInterval)
        let job = PlaybackJob(ring: ring, processor: processor, output: output, progressStepFrames: progressStep)
        current.withLock { $0 = job }
        control?.attach(job)
        defer {
            control?.detach()
            current.withLock { $0 = nil }
        }

        let totalFrames: Int64? = options.loops < 0 ? nil : info.frames.map { $0 - startFrame + $0 * Int64(options.loops) }
        var reporter = ProgressReporter(total: totalFrames, sampleRate: info.sampleRate, callback: progress)
        var submitted = false
        var loopsLeft = options.loops
        var framesThisPass: Int64 = 0
        decoding: while !job.isDone.load(ordering: .acquiring) {
            let (destination, room) = ring.writable()
            if room == 0 {
                if !submitted { thread.submit(job); submitted = true }
                job.waitForSpace(seenTicks: reporter.seenTicks)
                reporter.report(job)
                continue
            }
            let got: Int
            do {
                got = try decoder.read(into: destination, frames: min(room, Self.decodeChunkFrames), as: ringFormat)
                if got == 0 {
                    // Another pass, unless this one was empty (nothing would ever end).
                    guard loopsLeft != 0, framesThisPass > 0 else { break decoding }
                    if loopsLeft > 0 { loopsLeft -= 1 }
                    try decoder.seek(toFrame: 0)
                    framesThisPass = 0
                    continue
                }
            } catch {
                // Never leave the playback thread waiting for input that will not come.
                job.requestStop()
                if !submitted { thread.submit(job) }
                job.waitUntilDone(seenTicks: -1)
                throw error
            }
            framesThisPass += Int64(got)
            ring.commitWrite(got)
            // Start as soon as there is something to play; keep decoding ahead meanwhile.
            if !submitted { thread.submit(job); submitted = true }
            if !ring.isHalfEmpty { job.dataAvailable.signal() }
            // An unpaced device rarely lets the ring fill: look at the ticks here too,
            // so "started" and progress are not held back until decoding ends.
            reporter.report(job)
        }
        job.endOfInput.store(true, ordering: .releasing)
        job.dataAvailable.signal()
        if !submitted { thread.submit(job) }
        while !job.isDone.load(ordering: .acquiring) {
            job.waitUntilDone(seenTicks: reporter.seenTicks)
            reporter.report(job)
        }
        reporter.report(job)
        if let failure = job.failure {
            self.output = nil
            throw .deviceUnavailable(device: device, reason: failure.message)
        }
        return PlaybackReport(framesPlayed: Int64(job.framesPlayed.load(ordering: .acquiring)),
                              outputFormat: output.format, recoveries: output.recoveries - recoveriesBefore,
                              truncationWarning: decoder.truncationWarning,
                              stopped: job.stopRequested.load(ordering: .acquiring))
    }

    /// Stops the clip playing now; buffered audio is dropped, not drained. Any thread.
    public func stop() {
        current.withLock { $0 }?.requestStop()
    }

    /// Closes the device so other programs can have it; the next play reopens it.
    /// Call only between plays.
    public func closeOutput() {
        output = nil
    }

    public var isOutputOpen: Bool { output != nil }

    /// The format the device was opened with, while it is open.
    public var outputFormat: OutputFormat? { output?.format }

    /// Reuses the open device when rate and channels match; reopens otherwise.
    private func prepareOutput(for info: AudioFileInfo, pan: Float) throws(AnnounceError) -> any AudioOutput {
        let channels = info.channels == 1 && pan != 0 ? 2 : info.channels
        if let output, output.format.sampleRate == info.sampleRate, output.format.channels == channels {
            return output
        }
        output = nil  // close before reopening: a hw device opens once
        var formats = [info.exactSampleFormat]
        for format in [SampleFormat.float32, .int32, .int16] where !formats.contains(format) { formats.append(format) }
        let request = OutputRequest(sampleRate: info.sampleRate, channels: channels, sampleFormats: formats)
        let opened = try openOutput(device, request)
        output = opened
        return opened
    }
}

/// Calls back on each progress tick the playback thread publishes, and at the end.
private struct ProgressReporter {
    let total: Int64?
    let sampleRate: Int
    let callback: ((PlaybackProgress) -> Void)?
    private(set) var seenTicks = 0
    private var lastFrames: Int64?

    init(total: Int64?, sampleRate: Int, callback: ((PlaybackProgress) -> Void)?) {
        self.total = total
        self.sampleRate = sampleRate
        self.callback = callback
    }

    mutating func report(_ job: PlaybackJob) {
        guard let callback else { return }
        let ticks = job.progressTicks.load(ordering: .acquiring)
        guard ticks != seenTicks || job.isDone.load(ordering: .acquiring) else { return }
        seenTicks = ticks
        let played = Int64(job.framesPlayed.load(ordering: .acquiring))
        guard played != lastFrames else { return }
        lastFrames = played
        callback(PlaybackProgress(framesPlayed: played, totalFrames: total, sampleRate: sampleRate))
    }
}

/// Stops one play from any thread, also before the play has begun or after it ended.
public final class PlaybackControl: Sendable {
    private struct State: ~Copyable {
        var stopped = false
        var job: PlaybackJob?
    }

    private let state = Mutex(State())

    public init() {}

    public func stop() {
        let job = state.withLock { state in
            state.stopped = true
            return state.job
        }
        job?.requestStop()
    }

    public var isStopped: Bool { state.withLock { $0.stopped } }

    func attach(_ job: PlaybackJob) {
        let stopped = state.withLock { state in
            state.job = job
            return state.stopped
        }
        if stopped { job.requestStop() }
    }

    func detach() {
        state.withLock { $0.job = nil }
    }
}
