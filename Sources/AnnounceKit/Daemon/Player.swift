import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the player tells the control side; posted from the play threads.
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
    /// The device could not be used: another program holds it (busy) or it went away (lost).
    public var deviceTrouble: DeviceTrouble?
}

public enum DeviceTrouble: Sendable, Equatable {
    /// EBUSY at open; the reason names the holder.
    case busy(String)
    /// Failed mid-play or cannot be reopened: unplugged, sound server gone.
    case lost(String)
}

/// The daemon's decode side. Each play gets its own thread, which opens the
/// clip, decodes it ahead into the device's engine (one engine, one playback
/// thread per device; plays on the same device are mixed) and reports back.
/// A housekeeping thread closes idle devices.
public final class Player: @unchecked Sendable {
    /// The fade-in when a clip resumes mid-way.
    static let resumeFade = TimeSpan(seconds: 0.05)

    private let openOutput: PlaybackEngine.OutputOpener
    private let post: @Sendable (PlayerReport) -> Void
    private struct Engines {
        var byDevice: [String: PlaybackEngine] = [:]
        /// Plays holding each engine; an engine with none may be closed.
        var users: [String: Int] = [:]
    }
    /// Held while a device opens or closes, so a hardware PCM is never opened twice.
    private let engines = Mutex(Engines())
    /// Plays in progress, by item id.
    private let controls = Mutex<[String: PlaybackControl]>([:])
    private let running = Atomic<Int>(0)
    private let playEnded = Semaphore()
    private let housekeeping = Semaphore()
    private let closeRequests = Mutex<[String?]>([])
    private let shuttingDown = Atomic<Bool>(false)
    private var housekeeper = pthread_t()
    /// Decoded alert sounds.
    let alertCache = AlertCache()

    public init(openOutput: @escaping PlaybackEngine.OutputOpener = { device, request throws(AnnounceError) in
        try ALSAOutput(device: device, request: request)
    }, post: @escaping @Sendable (PlayerReport) -> Void) {
        self.openOutput = openOutput
        self.post = post
        housekeeper = startThread { [self] in houseKeep() }
    }

    /// Plays `item` from its resume point on `device`, at mixer gain `gain` (ducked). Control side.
    public func play(_ item: QueueItem, device: String, gain: Float = 1, alert: Bool = false) {
        let control = PlaybackControl(gain: gain)
        controls.withLock { $0[item.id] = control }
        running.add(1, ordering: .relaxed)
        let thread = startThread { [self] in
            play(item, device: device, control: control, alert: alert)
            controls.withLock { if $0[item.id] === control { $0[item.id] = nil } }
            running.subtract(1, ordering: .releasing)
            playEnded.signal()
        }
        pthread_detach(thread)
    }

    /// Stops a play; its `ended` report follows. Control side.
    public func stop(_ id: String) {
        controls.withLock { $0[id] }?.stop()
    }

    /// Ramps a play's mixer gain (ducking). Control side.
    public func setGain(_ id: String, gain: Float, overSeconds seconds: Double) {
        controls.withLock { $0[id] }?.setGain(gain, overSeconds: seconds)
    }

    /// Closes every idle device but `except`; reports which. Control side.
    public func closeDevices(except device: String?) {
        closeRequests.withLock { $0.append(device) }
        housekeeping.signal()
    }

    /// Stops every play, waits for them, closes the devices and ends the threads.
    public func shutdown() {
        for control in controls.withLock({ Array($0.values) }) { control.stop() }
        while running.load(ordering: .acquiring) > 0 { playEnded.wait() }
        shuttingDown.store(true, ordering: .releasing)
        housekeeping.signal()
        pthread_join(housekeeper, nil)
    }

    private func houseKeep() {
        while true {
            housekeeping.wait()
            if shuttingDown.load(ordering: .acquiring) {
                _ = closeIdleEngines(except: nil)
                return
            }
            for except in closeRequests.withLock({ requests in defer { requests.removeAll() }; return requests }) {
                let closed = closeIdleEngines(except: except)
                if !closed.isEmpty { post(.devicesClosed(closed)) }
            }
        }
    }

    /// Closes and forgets the engines nobody plays on (but `except`'s); returns the devices that were open.
    private func closeIdleEngines(except device: String?) -> [String] {
        engines.withLock { engines in
            var closed: [String] = []
            for (name, engine) in engines.byDevice where name != device && engines.users[name, default: 0] == 0 {
                if engine.closeOutputIfIdle() { closed.append(name) }
                engines.byDevice[name] = nil
            }
            return closed.sorted()
        }
    }

    private func acquireEngine(_ device: String) -> PlaybackEngine {
        engines.withLock { engines in
            engines.users[device, default: 0] += 1
            if let engine = engines.byDevice[device] { return engine }
            let engine = PlaybackEngine(device: device, openOutput: openOutput)
            engines.byDevice[device] = engine
            return engine
        }
    }

    private func releaseEngine(_ device: String) {
        engines.withLock { engines in
            engines.users[device, default: 1] -= 1
            if engines.users[device] == 0 { engines.users[device] = nil }
        }
    }

    private func play(_ item: QueueItem, device: String, control: PlaybackControl, alert: Bool) {
        var details = PlayDetails(device: device)
        func ended(_ end: PlaybackEnd, heard: Int64 = 0, total: Int64? = nil, rate: Int? = nil) {
            post(.ended(id: item.id, heardFrames: heard, totalFrames: total, sampleRate: rate, end: end, details: details))
        }
        let decoder: any AudioDecoder
        do {
            decoder = alert ? try alertCache.decoder(for: item.clip.path) : try DecoderRegistry.open(item.clip.path)
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

        // An idle device on another name is given back first: a hardware PCM opens once.
        let closed = closeIdleEngines(except: device)
        if !closed.isEmpty { post(.devicesClosed(closed)) }
        let engine = acquireEngine(device)
        defer { releaseEngine(device) }

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
            if let failure = report.deviceFailure {
                let message = AnnounceError.deviceUnavailable(device: device, reason: failure.message).description
                if failure.isDeviceLoss { details.deviceTrouble = .lost(message) }
                return ended(.failed(code: 69, message: message), heard: report.framesPlayed, total: total, rate: info.sampleRate)
            }
            ended(report.stopped ? .stopped : .finished, heard: report.framesPlayed, total: total, rate: info.sampleRate)
        } catch {
            switch error {
            case .deviceBusy(_, let reason): details.deviceTrouble = .busy(reason)
            case .deviceUnavailable(_, let reason): details.deviceTrouble = .lost(reason)
            default: break
            }
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

/// Starts a joinable POSIX thread running `body`.
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    let status = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(status == 0, "cannot start a thread: \(systemErrorMessage(status))")
    return thread
}
