import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import CPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Drives the playback engines, one per open device, for the control side. Each play gets
/// its own thread, which opens the clip, decodes it ahead into its device's engine (one
/// engine, one playback thread per device; plays on the same device are mixed) and reports
/// back. A housekeeping thread closes idle devices. It decides nothing about items.
final class EngineDriver: @unchecked Sendable {
    /// The fade-in when a clip resumes mid-way.
    static let resumeFade = TimeSpan(seconds: 0.05)
    /// Progress with nobody watching it is the daemon's own (status, the 25/50/75% events):
    /// once a second is enough, and spares every stream nine wake-ups of two threads a second;
    /// a clip shorter than 8 s gets eight reports, so that no 25% mark goes by unseen.
    static let unwatchedProgressInterval = 1.0

    /// Makes the source one play of an item reads; `alert`: a sound the daemon keeps decoded;
    /// `cancellation`: the play's stop, which ends what the source waits on (a speech engine).
    typealias SourceMaker =
        @Sendable (_ item: QueueItem, _ alert: Bool, _ cancellation: Cancellation) throws(AnnounceError) -> any Source

    let openOutput: PlaybackEngine.OutputOpener
    private let makeSource: SourceMaker
    private let post: @Sendable (EngineReport) -> Void
    struct Engines {
        var byDevice: [DeviceName: PlaybackEngine] = [:]
        /// Plays holding each engine; an engine with none may be closed.
        var users: [DeviceName: Int] = [:]
        /// An alert's own engine, kept open between alerts while the device's shared engine is:
        /// the next alert over the stream skips connecting to the sound server (~4 ms).
        var spareOverlays: [DeviceName: SpareOverlay] = [:]
    }
    /// A kept alert engine, for the next alert while the shared engine is in the same opening
    /// (not reopened at another format or after a failure): it follows the shared stream, which
    /// every play on the device joins while it is open.
    struct SpareOverlay {
        let engine: PlaybackEngine
        let sharedOpenings: Int
    }
    /// Held while a device opens or closes, so a hardware PCM is never opened twice.
    let engines = Mutex(Engines())
    /// The sound-server variables of the latest play on each device: the device opens with them.
    let openEnvironments = DeviceEnvironments()
    /// Plays in progress, by item id (one per device for multi-route).
    private let controls = Mutex<[ItemID: [PlaybackControl]]>([:])
    private let running = Atomic<Int>(0)
    /// The plays' decode threads, two kept parked between plays.
    private let playThreads = ParkedThreads(named: "announce-play", keep: 2)
    private let playEnded = CountingSemaphore()
    private let housekeeping = CountingSemaphore()
    private let closeRequests = Mutex<[Set<DeviceName>]>([])
    private let shuttingDown = Atomic<Bool>(false)
    private var housekeeper = pthread_t()
    /// Decoded alert sounds.
    let alertCache: AlertCache
    /// Brings plays to their loudness, measuring each clip once.
    let leveler: Leveler
    /// A speech engine started ahead of the next say.
    private let standby = EngineStandby(clock: { SystemClock.monotonic() })

    /// `makeSource`: nil for files, speech and streams (`sources`).
    init(
        openOutput: @escaping PlaybackEngine.OutputOpener = PlaybackEngine.defaultOpener,
        makeSource: SourceMaker? = nil, speechCache: SpeechCache? = nil, media: MediaDirectory? = nil,
        downloads: Downloads? = nil, leveler: Leveler = Leveler(cache: LoudnessCache(path: nil) { _ in }),
        post: @escaping @Sendable (EngineReport) -> Void
    ) {
        let alertCache = AlertCache()
        self.leveler = leveler
        self.alertCache = alertCache
        self.openOutput = openOutput
        self.makeSource =
            makeSource
            ?? Self.sources(
                alertCache: alertCache, speechCache: speechCache, media: media,
                downloads: downloads, standby: standby
            ) { post(.title(id: $0, title: $1)) }
        self.post = post
        housekeeper = startThread(named: "announce-house") { [self] in houseKeep() }
    }

    /// What the config file decides about how a play sounds.
    struct Tuning: Sendable {
        /// What `--skip-silence` cuts.
        var silence = SilenceRule.default
        /// What its loudness is brought to.
        var loudness = LoudnessTarget.standard
        /// Quiet mode's night level: dB lower than it would play (nil: as it is).
        var nightLevel: Double?
        /// Silence before it when its device opens, seconds.
        var wakeUp = 0.0
        /// Its device, once it opens, stays open writing silence until told to close (`keep-open`).
        var keepsDeviceOpen = false
    }

    /// Plays `item` from its resume point on `devices` (several for multi-route, all at once,
    /// reported as one play), at mixer gain `gain` (ducked). `alert`: from the alert cache.
    /// `watched`: someone shows its progress (else it comes once a second). Control side.
    func play(
        _ item: QueueItem, devices: [DeviceName], gain: Float = 1, alert: Bool = false, watched: Bool = false,
        tuning: Tuning = Tuning()
    ) {
        let group = RouteGroup(count: devices.count, post: post)
        let plays = devices.map { device in
            let control = PlaybackControl(gain: gain)
            if !watched { control.progressInterval = Self.unwatchedProgressInterval }
            return (device, control)
        }
        controls.withLock { $0[item.id] = plays.map(\.1) }
        for (index, (device, control)) in plays.enumerated() {
            running.add(1, ordering: .relaxed)
            playThreads.run { [self] in
                play(item, device: device, control: control, alert: alert, tuning: tuning, route: index, group: group)
                controls.withLock { controls in
                    if controls[item.id]?.contains(where: { $0 === control }) == true {
                        controls[item.id]?.removeAll { $0 === control }
                        if controls[item.id]?.isEmpty == true { controls[item.id] = nil }
                    }
                }
                running.subtract(1, ordering: .releasing)
                playEnded.signal()
                if item.clip.speech != nil { housekeeping.signal() }  // a speech engine may wait now: time its end
            }
        }
    }

    /// Stops a play; its `ended` report follows. Control side.
    func stop(_ id: ItemID) {
        for control in controls.withLock({ $0[id] ?? [] }) { control.stop() }
    }

    /// Someone started showing a play's progress: report it at the engine's full rate. Control side.
    func watchProgress(_ id: ItemID) {
        for control in controls.withLock({ $0[id] ?? [] }) { control.progressInterval = nil }
    }

    /// Ramps a play's mixer gain (ducking). Control side.
    func setGain(_ id: ItemID, gain: Float, overSeconds seconds: Double) {
        for control in controls.withLock({ $0[id] ?? [] }) { control.setGain(gain, overSeconds: seconds) }
    }

    /// Closes every idle device but those in `except`; reports which. Control side.
    func closeDevices(except devices: Set<DeviceName> = []) {
        closeRequests.withLock { $0.append(devices) }
        housekeeping.signal()
    }

    /// Stops every play, waits for them, closes the devices and ends the threads.
    func shutdown() {
        for control in controls.withLock({ $0.values.flatMap { $0 } }) { control.stop() }
        while running.load(ordering: .acquiring) > 0 { playEnded.wait() }
        playThreads.release()
        standby.close()
        shuttingDown.store(true, ordering: .releasing)
        housekeeping.signal()
        pthread_join(housekeeper, nil)
    }

    private func houseKeep() {
        while true {
            // The only timed wake-up here: a speech engine started ahead and left unused is ended.
            if let seconds = standby.secondsLeft(now: SystemClock.monotonic()) {
                if !housekeeping.wait(seconds: seconds) {
                    standby.expire(now: SystemClock.monotonic())
                    continue
                }
            } else {
                housekeeping.wait()
            }
            if shuttingDown.load(ordering: .acquiring) {
                _ = closeIdleEngines(except: [])
                return
            }
            for except in closeRequests.withLock({ requests in
                defer { requests.removeAll() }
                return requests
            }) {
                let closed = closeIdleEngines(except: except)
                if !closed.isEmpty { post(.devicesClosed(closed)) }
            }
        }
    }

    /// A chime's frames in the item's format, at the item's loudness; none for no chime.
    private func chime(_ path: String?, as format: SourceFormat, target: LoudnessTarget) throws(AnnounceError)
        -> [Float]
    {
        guard let path else { return [] }
        let file = FileName(path)
        let sound = try leveler.level(
            FileSource(file: file), key: target.lufs.flatMap { LoudnessCache.key(of: file, target: $0) },
            target: target)
        return try Chimes.render(sound, as: format)
    }

    private func play(
        _ item: QueueItem, device: DeviceName, control: PlaybackControl, alert: Bool, tuning: Tuning,
        route: Int, group: RouteGroup
    ) {
        var details = PlayDetails(devices: DeviceList([device]))
        // Frames played again (a sentence's start up to where it was heard) are not heard twice.
        var replayed: Int64 = 0
        var opened: (any Source)?
        let startFrameAt = { (rate: Int) in item.clip.start.map { TimeSpan(seconds: $0).frames(atRate: rate) } ?? 0 }
        func ended(_ end: PlaybackEnd, played: Int64 = 0, total: Int64? = nil, rate: Int? = nil) {
            let heard = max(0, played - replayed)
            if let opened, item.clip.loops == 0 {
                details.heardFraction = opened.heardFraction(
                    forHeard: startFrameAt(opened.format.sampleRate) + item.heardFrames + heard)
            }
            group.ended(
                .ended(
                    id: item.id, heardFrames: heard, totalFrames: total, sampleRate: rate, end: end, details: details))
        }
        let source: any Source
        let chimes: Chimes
        do {
            // Any source, a file's or another kind's, leveled and reshaped alike; its frames stay source time.
            let leveled = try leveler.level(
                makeSource(item, alert, control.cancellation), of: item, target: tuning.loudness
            ) {
                [makeSource] () throws(AnnounceError) in try makeSource(item, alert, control.cancellation)
            }
            source = try ReshapedSource.applying(Reshaping(item.clip, silence: tuning.silence), to: leveled)
            opened = source
            chimes = Chimes(
                before: try chime(item.clip.chime, as: source.format, target: tuning.loudness),
                after: try chime(item.clip.chimeAfter, as: source.format, target: tuning.loudness))
        } catch {
            // Stopped while the source was being made (a speech engine killed by the stop).
            if control.isStopped { return ended(.stopped) }
            return ended(.failed(code: error.exitCode, message: error.description))
        }
        let (info, duration) = (source.format, source.duration)
        let startFrame = startFrameAt(info.sampleRate)
        var total = PlaybackOptions.programFrames(
            fileFrames: duration.frames, startFrame: startFrame, loops: item.clip.loops)
        // An estimated length is counted exactly alongside, and published when known.
        var counting = duration.isEstimate
        // A first play's `--start` against a length the client could not know (speech): the one rule, 64.
        if item.heardFrames == 0,
            let problem = PlaybackOptions.startProblem(
                item.clip.start.map { TimeSpan(seconds: $0) },
                sampleRate: info.sampleRate, frames: duration.frames,
                name: source.name)
        {
            return ended(.failed(code: problem.exitCode, message: problem.description))
        }
        guard
            let position = Self.resumePoint(
                of: source, heard: item.heardFrames, startFrame: startFrame,
                loops: item.clip.loops)
        else {
            return ended(.finished, total: total, rate: info.sampleRate)  // nothing was left to hear
        }
        replayed = position.replayed
        // Where in the program this play begins.
        let heardBefore = item.heardFrames - replayed
        if let total, total > 0 {  // in seconds heard: at --rate 2, half the source's
            control.capProgressInterval(
                item.clip.wallSeconds(forSource: Double(total - heardBefore) / Double(info.sampleRate)) / 8)
        }
        if control.isStopped { return ended(.stopped, total: total, rate: info.sampleRate) }

        // An idle device on another name is given back first: a hardware PCM opens once.
        let closed = closeIdleEngines(except: [device])
        if !closed.isEmpty { post(.devicesClosed(closed)) }
        openEnvironments[device] = item.clip.environment
        let overlay = alert ? overlayEngine(device) : nil
        let engine = overlay ?? acquireEngine(device)
        var options = PlaybackOptions(
            gain: item.clip.gain * (tuning.nightLevel.map { Float(pow(10, $0 / 20)) } ?? 1), pan: item.clip.pan,
            loops: position.loops,
            start: position.offset > 0 ? TimeSpan(seconds: Double(position.offset) / Double(info.sampleRate)) : nil,
            fadeIn: item.heardFrames > 0 ? Self.resumeFade : nil)
        // A stream beside one that plays: the sink is awake, and the device stays open anyway.
        options.wakeUp = tuning.wakeUp > 0 && overlay == nil ? TimeSpan(seconds: tuning.wakeUp) : nil
        options.keepsDeviceOpen = tuning.keepsDeviceOpen && overlay == nil
        var announced = false
        let result = Result { () throws(AnnounceError) -> PlaybackReport in
            try engine.play(source, options: options, chimes: chimes, control: control) { progress in
                // One rule for the length shown during and after the play: the header's, or the
                // exact count once known, or what decoded once the input has ended.
                var counted: Int64?
                if progress.totalIsFinal, let frames = progress.totalFrames, heardBefore + frames != total {
                    total = heardBefore + frames
                    (counted, counting) = (total, false)
                } else if counting, let frames = source.duration.exactFrames {
                    total = PlaybackOptions.programFrames(
                        fileFrames: frames, startFrame: startFrame, loops: item.clip.loops)
                    (counted, counting) = (total, false)
                }
                // Started means heard: a play that wrote nothing (a device failing at once) never started.
                if !announced, progress.started {
                    announced = true
                    details.format = engine.outputFormat?.description
                    group.started(
                        .started(
                            id: item.id, device: device, format: details.format ?? "",
                            buffering: engine.outputBuffering ?? "",
                            sampleRate: info.sampleRate, totalFrames: counting ? nil : total))
                }
                // The first route speaks for a multi-route play.
                if route == 0 {
                    self.post(
                        .progress(
                            id: item.id, framesPlayed: max(0, progress.framesPlayed - replayed),
                            sampleRate: progress.sampleRate,
                            totalFrames: announced ? counted : nil))
                }
            }
        }
        // Given back before the report: the control side may close the device at once.
        if let overlay {
            let healthy = (try? result.get()).map { $0.deviceFailure == nil } ?? false
            releaseOverlay(overlay, device: device, keep: healthy)
        } else {
            releaseEngine(device)
        }
        // Ended before the count was published (an unpaced device): a play that reached its
        // end waits for the count, which by then has read most of the file; a stopped one does not.
        let playedToEnd = (try? result.get()).map { !$0.stopped && $0.deviceFailure == nil } ?? false
        if counting, let frames = (playedToEnd ? source.settledDuration() : source.duration).exactFrames {
            total = PlaybackOptions.programFrames(fileFrames: frames, startFrame: startFrame, loops: item.clip.loops)
        }
        switch result {
        case .success(let report):
            details.format = report.outputFormat.description
            var warnings: [String] = []
            if let warning = report.truncationWarning { warnings.append(warning) }
            if report.recoveries > 0 { warnings.append("recovered from \(report.recoveries) underrun(s)") }
            details.warning = warnings.isEmpty ? nil : warnings.joined(separator: "; ")
            details.frames = report.framesPlayed
            if let failure = report.deviceFailure {
                let message = AnnounceError.deviceUnavailable(device: device, reason: failure.message).description
                // A file that cannot be written (a full disk, EIO) does not come back as a device
                // does: the item fails (69) instead of waiting for it as lost.
                if failure.isDeviceLoss && device.fileArgument == nil {
                    details.deviceTrouble = .lost(device: device, reason: message)
                }
                // The engine gave the failed device up: it is closed as far as anyone can tell
                // (an alert's own stream beside it says nothing of the shared one).
                if overlay == nil { post(.devicesClosed([device])) }
                return ended(
                    .failed(code: 69, message: message), played: report.framesPlayed, total: total,
                    rate: info.sampleRate)
            }
            // A first play from a --start that the header's length allowed, in a file whose audio
            // ends before it (truncated): nothing was heard, which is no success (64, as `play`
            // says it of a length it knows).
            if !report.stopped, report.framesPlayed == 0, item.heardFrames == 0, let start = item.clip.start,
                startFrame > 0
            {
                let problem = PlaybackOptions.startPastEnd(
                    TimeSpan(seconds: start), name: source.name,
                    // A count against the header's ("truncated: 0.3 of 1.0 s") says where; an
                    // Ogg file's, counted from the seek, would not.
                    end: report.truncationWarning.flatMap { $0.contains(" of ") ? $0 : nil }
                        ?? "the file is cut short before it")
                details.warning = nil  // the reason says it: one line
                return ended(
                    .failed(code: problem.exitCode, message: problem.description), total: total, rate: info.sampleRate)
            }
            ended(
                report.stopped ? .stopped : .finished, played: report.framesPlayed, total: total, rate: info.sampleRate)
        case .failure(let error):
            switch error {
            case .deviceBusy(_, let reason): details.deviceTrouble = .busy(device: device, reason: reason)
            case .deviceUnavailable(_, let reason): details.deviceTrouble = .unavailable(device: device, reason: reason)
            default: break
            }
            ended(.failed(code: error.exitCode, message: error.description), total: total, rate: info.sampleRate)
        }
    }
}

/// Each device's sound-server variables, shared with the engines' openers.
final class DeviceEnvironments: Sendable {
    private let byDevice = Mutex<[DeviceName: [String: String]]>([:])

    subscript(device: DeviceName) -> [String: String]? {
        get { byDevice.withLock { $0[device] } }
        set { byDevice.withLock { $0[device] = newValue } }
    }
}
