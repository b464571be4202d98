import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the player tells the control side; posted from the player's thread.
public enum PlayerReport: Sendable, Equatable {
    /// The first frames of this play went to the device.
    case started(id: String, device: String, format: String, sampleRate: Int, totalFrames: Int64?)
    /// Frames heard so far in this play.
    case progress(id: String, framesPlayed: Int64, sampleRate: Int)
    /// The play ended: frames heard in it, the program's length when known.
    case ended(id: String, heardFrames: Int64, totalFrames: Int64?, sampleRate: Int?, end: PlaybackEnd, details: PlayDetails)
    /// These devices were closed (idle, or another device is needed).
    case devicesClosed([String])
}

/// How a play went, for the finished event and the client's debug line.
public struct PlayDetails: Sendable, Equatable {
    public var device: String
    public var format: String?
    public var warning: String?
    /// Frames heard in this play.
    public var frames: Int64 = 0
}

/// The daemon's decode side: one thread that opens each clip, plays it through
/// one engine per device (each engine has its own playback thread) and reports
/// back. Everything touching engines runs on this thread.
public final class Player: @unchecked Sendable {
    private enum Command {
        case play(QueueItem, device: String, control: PlaybackControl)
        case closeDevices(except: String?)
        case shutdown
    }

    /// The fade-in when a clip resumes mid-way.
    static let resumeFade = TimeSpan(seconds: 0.05)

    private let openOutput: PlaybackEngine.OutputOpener
    private let post: @Sendable (PlayerReport) -> Void
    private let wake = Semaphore()
    private let commands = Mutex<[Command]>([])
    /// The play in progress, so `stop` reaches it even before it has begun.
    private let currentControl = Mutex<PlaybackControl?>(nil)
    private var engines: [String: PlaybackEngine] = [:]
    private var thread = pthread_t()

    public init(openOutput: @escaping PlaybackEngine.OutputOpener = { device, request throws(AnnounceError) in
        try ALSAOutput(device: device, request: request)
    }, post: @escaping @Sendable (PlayerReport) -> Void) {
        self.openOutput = openOutput
        self.post = post
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Player>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(status == 0, "cannot start the player thread: \(systemErrorMessage(status))")
    }

    /// Plays `item` from its resume point on `device`. Control side.
    public func play(_ item: QueueItem, device: String) {
        let control = PlaybackControl()
        currentControl.withLock { $0 = control }
        send(.play(item, device: device, control: control))
    }

    /// Stops the current play; its `ended` report follows. Control side.
    public func stop() {
        currentControl.withLock { $0 }?.stop()
    }

    /// Closes every open device but `except`; reports which. Control side.
    public func closeDevices(except device: String?) {
        send(.closeDevices(except: device))
    }

    /// Stops what plays, closes the devices and ends the thread; waits for it.
    public func shutdown() {
        stop()
        send(.shutdown)
        pthread_join(thread, nil)
    }

    private func send(_ command: Command) {
        commands.withLock { $0.append(command) }
        wake.signal()
    }

    private func run() {
        while true {
            wake.wait()
            guard let command = commands.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            switch command {
            case .play(let item, let device, let control):
                play(item, device: device, control: control)
                currentControl.withLock { if $0 === control { $0 = nil } }
            case .closeDevices(let except):
                let closed = closeEngines(except: except)
                if !closed.isEmpty { post(.devicesClosed(closed)) }
            case .shutdown:
                _ = closeEngines(except: nil)
                return
            }
        }
    }

    private func closeEngines(except device: String?) -> [String] {
        var closed: [String] = []
        for (name, engine) in engines where name != device {
            if engine.isOutputOpen { closed.append(name) }
            engine.closeOutput()
            engines[name] = nil
        }
        return closed.sorted()
    }

    private func play(_ item: QueueItem, device: String, control: PlaybackControl) {
        var details = PlayDetails(device: device)
        func ended(_ end: PlaybackEnd, heard: Int64 = 0, total: Int64? = nil, rate: Int? = nil) {
            post(.ended(id: item.id, heardFrames: heard, totalFrames: total, sampleRate: rate, end: end, details: details))
        }
        let decoder: any AudioDecoder
        do {
            decoder = try DecoderRegistry.open(item.clip.path)
        } catch {
            return ended(.failed(code: error.exitCode, message: error.description))
        }
        let info = decoder.info
        let startFrame = item.clip.start.map { TimeSpan(seconds: $0).frames(atRate: info.sampleRate) } ?? 0
        let total = Self.programFrames(fileFrames: info.frames, startFrame: startFrame, loops: item.clip.loops)
        guard let position = Self.resumePoint(heard: item.heardFrames, startFrame: startFrame,
                                              fileFrames: info.frames, loops: item.clip.loops) else {
            return ended(.finished, total: total, rate: info.sampleRate)  // nothing was left to hear
        }
        if control.isStopped { return ended(.stopped, total: total, rate: info.sampleRate) }

        // One device at a time: a hardware PCM opens once, and an idle one is given back.
        let closed = closeEngines(except: device)
        if !closed.isEmpty { post(.devicesClosed(closed)) }
        let engine = engines[device] ?? PlaybackEngine(device: device, openOutput: openOutput)
        engines[device] = engine

        let options = PlaybackOptions(
            gain: item.clip.gain, pan: item.clip.pan, loops: position.loops,
            start: position.offset > 0 ? TimeSpan(seconds: Double(position.offset) / Double(info.sampleRate)) : nil,
            fadeIn: item.heardFrames > 0 ? Self.resumeFade : nil)
        var announced = false
        do {
            let report = try engine.play(decoder, options: options, control: control) { progress in
                if !announced {
                    announced = true
                    details.format = engine.outputFormat?.description
                    self.post(.started(id: item.id, device: device, format: details.format ?? "",
                                       sampleRate: info.sampleRate, totalFrames: total))
                }
                self.post(.progress(id: item.id, framesPlayed: progress.framesPlayed, sampleRate: progress.sampleRate))
            }
            details.format = report.outputFormat.description
            var warnings: [String] = []
            if let warning = report.truncationWarning { warnings.append(warning) }
            if report.recoveries > 0 { warnings.append("recovered from \(report.recoveries) underrun(s)") }
            details.warning = warnings.isEmpty ? nil : warnings.joined(separator: "; ")
            details.frames = report.framesPlayed
            ended(report.stopped ? .stopped : .finished, heard: report.framesPlayed, total: total, rate: info.sampleRate)
        } catch {
            if case .deviceUnavailable = error { engine.closeOutput() }
            ended(.failed(code: error.exitCode, message: error.description), total: total, rate: info.sampleRate)
        }
    }

    /// Frames in the whole program: every pass, the first from `startFrame`.
    static func programFrames(fileFrames: Int64?, startFrame: Int64, loops: Int) -> Int64? {
        guard loops >= 0, let fileFrames else { return nil }
        let (passes, overflow) = fileFrames.multipliedReportingOverflow(by: Int64(loops) + 1)
        return overflow ? nil : passes - startFrame
    }

    /// Where to go on after `heard` program frames: the offset in the file and the
    /// extra passes left; nil when the whole program has been heard.
    static func resumePoint(heard: Int64, startFrame: Int64, fileFrames: Int64?, loops: Int) -> (offset: Int64, loops: Int)? {
        let position = startFrame + heard
        guard let fileFrames, fileFrames > 0 else { return (position, loops) }
        let pass = position / fileFrames
        if loops >= 0 && pass > loops { return nil }
        return (position % fileFrames, loops < 0 ? -1 : loops - Int(pass))
    }
}
