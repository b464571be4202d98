import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import Synchronization

/// Published from frames actually played, never from a timer.
public struct PlaybackProgress: Equatable, Sendable {
    public var framesPlayed: Int64
    /// Frames this play will last; nil when looping forever or the length is unknown.
    public var totalFrames: Int64?
    public var sampleRate: Int
    /// Frames have gone to the device (the first tick comes with the first write, before any
    /// is heard); false only in the final report of a play that wrote nothing.
    public var started = true
    /// Set once the input has ended: `totalFrames` is then what decoded, not what the header
    /// said (a truncated file's are fewer).
    public var totalIsFinal = false
}

public struct PlaybackReport: Equatable, Sendable {
    /// Frames of the file heard, in its own timeline (at its rate when resampled, in source
    /// time when reshaped: `Source.sourceFrames(forRead:)`).
    public var framesPlayed: Int64
    public var outputFormat: OutputFormat
    /// Underruns and suspends the output recovered from during this clip.
    public var recoveries: Int
    /// What the source found wrong (it ended early: what played is what decoded).
    public var truncationWarning: String?
    public var stopped: Bool
    /// The device failed mid-clip (unplugged, sound server gone) after `framesPlayed`.
    public var deviceFailure: OutputFailure?
}

/// One device: its output, its playback thread and the streams mixed on it.
/// `play` may be called from several threads at once, each decoding its own
/// clip ahead into a ring; the playback thread mixes them into the device.
/// An idle device is opened at the first clip's own rate and channels, so a
/// clip alone plays sample-exact; clips that join it are converted to it.
public final class PlaybackEngine: @unchecked Sendable {
    public typealias OutputOpener = (DeviceName, OutputRequest) throws(AnnounceError) -> any AudioOutput

    public let device: DeviceName
    private let openOutput: OutputOpener
    private let thread = PlaybackThread()
    private struct State {
        var open: OpenDevice?
        /// A device that failed while other streams still played on it: closed when they are done.
        var failed: OpenDevice?
        /// Job slots not in use; a play holds its slot until its job is done.
        var freeSlots: UInt64 = OpenDevice.maxStreams == 64 ? .max : (1 << UInt64(OpenDevice.maxStreams)) - 1
        var isIdle: Bool { freeSlots.nonzeroBitCount == OpenDevice.maxStreams }
        /// Times the device was opened: a stream kept beside this one is tied to one opening.
        var openings = 0
    }
    private let state = Mutex(State())
    /// How often progress is reported, in seconds of audio played, unless the control says otherwise.
    public static let progressInterval = 0.1

    /// Opens a device through the output backend (`Outputs.backend`): every engine's default.
    public static func defaultOpener(_ device: DeviceName, request: OutputRequest) throws(AnnounceError)
        -> any AudioOutput
    {
        try Outputs.backend.open(device, request: request)
    }

    public init(device: DeviceName, openOutput: @escaping OutputOpener = PlaybackEngine.defaultOpener) {
        self.device = device
        self.openOutput = openOutput
    }

    /// Only once every play has returned.
    deinit { thread.shutdown() }

    /// Plays `source` to the end (or until stopped through `control`), mixed with
    /// whatever else plays on the device, returning what was heard.
    /// `chimes`: sounds before and after it in the same stream (the source's format), in no position.
    public func play(
        _ source: any Source, options: PlaybackOptions = PlaybackOptions(), chimes: Chimes = Chimes(),
        control: PlaybackControl? = nil,
        progress: ((PlaybackProgress) -> Void)? = nil
    ) throws(AnnounceError) -> PlaybackReport {
        let input = source.format
        let startFrame = try source.startFrame(options.start, loops: options.loops)
        let channels = input.channels == 1 && options.pan != 0 ? 2 : input.channels
        let (device, slot, alone, opened) = try acquire(
            rate: input.sampleRate, channels: channels, exactFormat: input.exactSampleFormat,
            keepOpen: options.keepsDeviceOpen)
        var failed = false
        defer { release(slot, device, failed: failed) }
        let output = device.output
        let format = output.format
        guard StreamMixer.canMix(channels: channels, onto: format.channels) else {
            throw .deviceUnavailable(
                device: self.device,
                reason:
                    "it is open with \(format.channels) channels; \(source.name) has \(channels), which cannot be mixed onto them"
            )
        }
        let recoveriesBefore = output.recoveries  // the device may have played earlier clips
        if startFrame > 0 { try source.seek(toFrame: startFrame) }

        // A clip at another rate than the open device is resampled here, on the decode side.
        let resampler =
            format.sampleRate == input.sampleRate
            ? nil
            : try Resampler(channels: input.channels, inputRate: input.sampleRate, outputRate: format.sampleRate)
        let ringFormat =
            resampler == nil && chimes.isEmpty && source.readableFormats.contains(format.sampleFormat)
            ? format.sampleFormat : .float32
        // Each side sleeps until half the ring is free or filled, so the threads wake each other
        // once per half ring. A clip that starts alone gets 2 MiB (at most 16 s; 11.9 s of 16-bit
        // stereo at 44.1 kHz): on an unpaced device (`null`, a file) the playback thread empties
        // the ring at once and sleeps until the next half, so each wake-up (two context switches)
        // moves about 6 s instead of 1. Clips that join get 2 s (at most 4 MB), so many streams
        // stay within a few MB.
        // A device this play opened gets the wake-up silence first, in the ring before the clip.
        let wakeFrames = opened ? Int(options.wakeUp?.frames(atRate: format.sampleRate) ?? 0) : 0
        let bytesPerFrame = ringFormat.bytesPerSample * input.channels
        let ringFrames =
            alone
            ? min(format.sampleRate * 16, (2 << 20) / bytesPerFrame)
            : min(format.sampleRate * 2, (4 << 20) / bytesPerFrame)
        let ring = PCMRing(capacityFrames: max(output.bufferFrames * 8, ringFrames), bytesPerFrame: bytesPerFrame)
        let job = PlaybackJob(
            ring: ring, device: device,
            directProcessor: FrameProcessor(
                input: ringFormat, inputChannels: input.channels, output: format,
                maxFrames: device.blockFrames, gain: options.gain, pan: options.pan),
            playsDirect: channels == format.channels || input.channels == 1,
            mixProcessor: FrameProcessor(
                input: ringFormat, inputChannels: input.channels,
                output: OutputFormat(sampleFormat: .float32, sampleRate: format.sampleRate, channels: channels),
                maxFrames: device.blockFrames, gain: options.gain, pan: options.pan),
            mixChannels: channels,
            // The control's own interval, if any, is applied as it attaches the job.
            progressStepFrames: progress == nil
                ? 0 : PlaybackControl.stepFrames(Self.progressInterval, rate: format.sampleRate),
            gain: 1, fadeInFrames: options.fadeIn.map { Int($0.frames(atRate: format.sampleRate)) } ?? 0,
            fadeInAfter: wakeFrames, arrivesWhileRead: source.arrivesWhileRead)
        control?.attach(job)
        defer { control?.detach() }

        var wakeLeft = wakeFrames
        // Device frames back to the source's timeline, for progress and the resume point: past
        // the wake-up silence, at its rate when resampled, and through its own map when it
        // reshapes (tempo, silence).
        let feed = ClipFeed(
            source: source, ringFormat: ringFormat, resampler: resampler, loops: options.loops,
            prelude: chimes.before, coda: chimes.after)
        let ratio = Double(input.sampleRate) / Double(format.sampleRate)
        let sourceFrames: (Int) -> Int64 = {
            // Past the chime, and no further than the program read (the closing tone follows it).
            let own = max(0, $0 - wakeFrames)
            let read = resampler == nil ? Int64(own) : Int64((Double(own) * ratio).rounded())
            return source.sourceFrames(forRead: min(max(0, read - Int64(feed.preludeFrames)), feed.framesDecoded))
        }
        let totalFrames = PlaybackOptions.programFrames(
            fileFrames: source.duration.frames, startFrame: startFrame, loops: options.loops)
        var reporter = ProgressReporter(
            total: totalFrames, sampleRate: input.sampleRate, sourceFrames: sourceFrames, callback: progress,
            startsAfter: wakeFrames)
        var submitted = false
        func submit() {
            if !submitted { thread.submit(job, slot: slot) }
            submitted = true
        }
        func report(stopped: Bool) -> PlaybackReport {
            PlaybackReport(
                framesPlayed: sourceFrames(job.framesPlayed.load(ordering: .acquiring)),
                outputFormat: format, recoveries: output.recoveries - recoveriesBefore,
                truncationWarning: source.warning, stopped: stopped, deviceFailure: job.failure)
        }
        while !job.isDone.load(ordering: .acquiring) {
            let (destination, room) = ring.writable()
            if room == 0 {
                submit()
                job.waitForSpace(seenTicks: reporter.seenTicks)
                reporter.report(job)
                continue
            }
            if wakeLeft > 0 {
                let silence = min(room, wakeLeft)
                destination.initializeMemory(as: UInt8.self, repeating: 0, count: silence * bytesPerFrame)
                ring.commitWrite(silence)
                wakeLeft -= silence
                submit()
                job.notifyData()
                continue
            }
            let frames: Int?
            do {
                frames = try feed.fill(destination, room: room)
            } catch {
                // Never leave the playback thread waiting for input that will not come.
                job.requestStop()
                submit()
                while !job.isDone.load(ordering: .acquiring) {
                    job.waitUntilDone(seenTicks: job.progressTicks.load(ordering: .acquiring))
                }
                withExtendedLifetime(job) { thread.waitUntilReleased(slot: slot) }
                // A stop that ended a read waiting for input (the control's cancellation): the
                // play was stopped, not failed.
                guard control?.isStopped == true else { throw error }
                return report(stopped: true)
            }
            guard let produced = frames else {
                reporter.inputEnded(total: source.sourceFrames(forRead: feed.framesDecoded))
                break
            }
            if produced > 0 {
                ring.commitWrite(produced)
                // Start as soon as there is something to play; keep decoding ahead meanwhile.
                submit()
                job.notifyData()
            }
            // An unpaced device rarely lets the ring fill: look at the ticks here too,
            // so "started" and progress are not held back until decoding ends.
            reporter.report(job)
        }
        job.endOfInput.store(true, ordering: .releasing)
        job.notifyData()
        submit()
        while !job.isDone.load(ordering: .acquiring) {
            job.waitUntilDone(seenTicks: reporter.seenTicks)
            reporter.report(job)
        }
        withExtendedLifetime(job) { thread.waitUntilReleased(slot: slot) }  // then the last reference is this side's
        reporter.report(job)
        failed = job.failure != nil
        return report(stopped: job.endedByStop)
    }

    /// Closes the device so other programs can have it, if nothing plays on it;
    /// the next play reopens it. Returns whether it was open and is now closed.
    @discardableResult
    public func closeOutputIfIdle() -> Bool {
        state.withLock { state in
            guard state.isIdle, let open = state.open else { return false }
            thread.letGo(open)
            open.output.close()
            state.open = nil
            return true
        }
    }

    /// Plays in progress on this device.
    var activePlays: Int { state.withLock { OpenDevice.maxStreams - $0.freeSlots.nonzeroBitCount } }

    /// How many times the device was opened so far (a reopening: a new format, after a failure).
    public var openings: Int { state.withLock { $0.openings } }

    /// Something plays on it through a sound server's plugin: a stream opened beside it is mixed
    /// by the server at once.
    public var playsThroughServer: Bool {
        state.withLock { !$0.isIdle && $0.open?.output.mixedByServer == true }
    }

    /// The format the device was opened with, while it is open.
    public var outputFormat: OutputFormat? { state.withLock { $0.open?.output.format } }

    /// How the open device buffers, for the log: "2 periods of 60 ms".
    public var outputBuffering: String? {
        state.withLock { state in
            state.open.map { open in
                let output = open.output
                let periods = output.bufferFrames / max(output.periodFrames, 1)
                let milliseconds =
                    (Double(output.periodFrames) * 10_000 / Double(output.format.sampleRate)).rounded() / 10
                return
                    "\(periods) periods of \(milliseconds == milliseconds.rounded() ? "\(Int(milliseconds))" : "\(milliseconds)") ms"
            }
        }
    }

    /// A slot and the open device, and whether the clip starts alone on it: an idle device is
    /// reused when rate and channels match and reopened for this clip otherwise; a busy one is
    /// shared as it is.
    /// A slot on the device, opened at this format when idle at another; whether the play is
    /// alone on it, and whether it opened it.
    private func acquire(rate: Int, channels: Int, exactFormat: SampleFormat, keepOpen: Bool) throws(AnnounceError)
        -> (OpenDevice, Int, Bool, Bool)
    {
        try state.withLock { state throws(AnnounceError) -> (OpenDevice, Int, Bool, Bool) in
            var opened = false
            guard state.freeSlots != 0 else {
                // The 33rd fails (69). Not a device problem: nothing waits for the device to come back.
                throw .unavailable("device '\(device)': \(OpenDevice.maxStreams) streams already play on it")
            }
            if state.isIdle,
                state.open.map({ $0.output.format.sampleRate != rate || $0.output.format.channels != channels }) ?? true
            {
                // Closed now, before reopening (a hw device opens once), whoever still holds the object.
                if let open = state.open { thread.letGo(open) }
                state.open?.output.close()
                state.open = nil
                // The file's own format first: a clip alone then reaches the device untouched.
                var formats = [exactFormat]
                for format in [SampleFormat.float32, .int32, .int16] where !formats.contains(format) {
                    formats.append(format)
                }
                let request = OutputRequest(sampleRate: rate, channels: channels, sampleFormats: formats)
                state.open = OpenDevice(output: try openOutput(device, request), keptOpen: keepOpen)
                state.openings += 1
                opened = true
            }
            guard let open = state.open else {
                throw .deviceUnavailable(device: device, reason: "it failed and other streams are still winding down")
            }
            let alone = state.isIdle
            let slot = state.freeSlots.trailingZeroBitCount
            state.freeSlots &= ~(1 << UInt64(slot))
            return (open, slot, alone, opened)
        }
    }

    private func release(_ slot: Int, _ device: OpenDevice, failed: Bool) {
        state.withLock { state in
            state.freeSlots |= 1 << UInt64(slot)
            // A failed device is reopened by the next play; closed once nothing plays on it.
            if failed, state.open === device {
                state.failed = device
                state.open = nil
            }
            if state.isIdle, let failed = state.failed {
                thread.letGo(failed)
                failed.output.close()
                state.failed = nil
            }
        }
    }
}
