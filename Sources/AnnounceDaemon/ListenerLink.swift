import AnnounceModel
import AnnounceSources
import AnnounceSystem
import CPosix
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// One user's daemon connected to the listener socket: the system daemon is a client of it
/// over this connection (docs/protocol.md): requests out, replies and events back.
final class ListenerLink {
    let uid: uid_t
    let name: String
    let connection: Connection
    private let device: DeviceName
    private let logger: Logger
    private let post: (EngineReport) -> Void
    /// What the queue calls the place a forwarded play is heard: opened with its first play,
    /// closed when none is left.
    var route: DeviceName { "listener:\(name)" }

    /// A play forwarded: its local id, the remote one once answered, the rate heard time counts in.
    private struct Forwarded {
        var local: ItemID
        var remote: ItemID?
        var sampleRate: Int
        var heard: Int64 = 0
        /// The whole program's frames, when the file's length is known (durations, the quarter marks).
        var total: Int64?
        var stopAsked = false
        /// Given up, to play on the device, if it has not started by then.
        var startBy: Double?
    }

    /// How long a forwarded play may take to start: the listener's own queue, paused or held
    /// (a busy device, other audio), must not hold the machine's.
    static let startLimit = 5.0
    private var forwarded: [Forwarded] = []
    /// Plays given up here (`giveUp`): their next start goes to the device.
    var gaveUp: Set<ItemID> = []
    /// What each reply answers, in order: a play's local id, or nil (a cancel's).
    private var awaiting: [ItemID?] = []

    init(
        fd: Int32, uid: uid_t, name: String, device: DeviceName, logger: Logger, post: @escaping (EngineReport) -> Void
    ) {
        connection = Connection(fd: fd)
        self.uid = uid
        self.name = name
        self.device = device
        self.logger = logger
        self.post = post
    }

    var isDead: Bool { connection.dead }

    func plays(_ id: ItemID) -> Bool { forwarded.contains { $0.local == id } }

    /// Sends `item`'s play with its file (and chimes) handed over; false when it cannot (it
    /// then plays on the device).
    func play(_ item: QueueItem, file: String, tuning: EngineDriver.Tuning, now: Double) -> Bool {
        // Heard time counts in the file's frames, as the engine's would: a play that moves back
        // to the device goes on from the same frame.
        guard let info = try? DecoderRegistry.open(FileName(file)).info, info.sampleRate > 0 else { return false }
        let rate = info.sampleRate
        // Where it goes on, as the engine would: the pass and the frame in it.
        let startFrame = Int64(((item.clip.start ?? 0) * Double(rate)).rounded())
        var loops = item.clip.loops
        var position = startFrame + item.heardFrames
        if item.heardFrames > 0 && loops != 0 {
            guard let frames = info.frames, frames > 0 else { return false }
            let pass = position / frames
            position %= frames
            if loops > 0 {
                guard pass <= Int64(loops) else { return false }
                loops -= Int(pass)
            }
        }
        guard
            !connection.wantsToWrite
                || {
                    connection.flush()
                    return !connection.wantsToWrite
                }()
        else { return false }
        var handed: [Int32] = []
        defer { for fd in handed { Glibc.close(fd) } }
        func hand(_ path: String) -> Int? {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            handed.append(fd)
            return handed.count - 1
        }
        guard let audio = hand(file) else { return false }
        let start = Double(position) / Double(rate)
        // Quiet mode's night level, as the engine would apply it.
        let night = tuning.nightLevel.map { Float(pow(10, $0 / 20)) } ?? 1
        var clip = Clip(
            path: SystemSettings.forwardedLabel(item.id), gain: min(item.clip.gain * night, Limits.gain.upperBound),
            pan: item.clip.pan, loops: loops, start: start > 0 ? start : nil, rate: item.clip.rate,
            pitch: item.clip.pitch,
            skipSilence: item.clip.skipSilence)
        clip.loudness = item.clip.loudness ?? tuning.loudness
        clip.handed = HandedFiles(audio: audio)
        if let chime = item.clip.chime, let index = hand(chime) {
            clip.chime = "/system-queue/chime"
            clip.handed?.chime = index
        }
        if let after = item.clip.chimeAfter, let index = hand(after) {
            clip.chimeAfter = "/system-queue/chime-after"
            clip.handed?.chimeAfter = index
        }
        let request = ItemRequest(
            clip: clip, priority: item.priority, interrupts: item.interrupts, session: item.session,
            duckLevel: item.duckLevel, ifOtherAudio: item.ifOtherAudio)
        guard send(.play(PlayRequest(items: [request], wait: true, progress: true)), descriptors: handed) else {
            return false
        }
        awaiting.append(item.id)
        let total = PlaybackOptions.programFrames(
            fileFrames: info.frames, startFrame: startFrame, loops: item.clip.loops)
        forwarded.append(Forwarded(local: item.id, sampleRate: rate, total: total, startBy: now + Self.startLimit))
        logger.info("\(item.id): plays through \(name)'s announce")
        return true
    }

    var nextDeadline: Double? { forwarded.compactMap(\.startBy).min() }

    /// Plays not started by their deadline: cancelled there, given back to play on the device.
    func giveUpWaiting(now: Double) {
        for play in forwarded where (play.startBy ?? .infinity) <= now {
            giveUp(play.local, reason: "\(name)'s announce did not start it within \(Int(Self.startLimit)) s")
        }
    }

    /// Cancels `id` there and gives it back to the queue, which starts it again at once, on
    /// the device this time (`gaveUp`): the listener's queue does not hold the machine's.
    private func giveUp(_ id: ItemID, reason: String) {
        guard let index = forwarded.firstIndex(where: { $0.local == id }) else { return }
        let play = forwarded.remove(at: index)
        if let remote = play.remote, send(.cancel(.ids([remote]))) { awaiting.append(nil) }
        logger.warning("\(id): \(reason): it plays on the device")
        if !play.stopAsked { gaveUp.insert(id) }
        post(
            .ended(
                id: play.local, heardFrames: play.heard, totalFrames: nil, sampleRate: play.sampleRate, end: .stopped,
                details: PlayDetails(devices: DeviceList([route]), frames: play.heard)))
        if forwarded.isEmpty { post(.devicesClosed([route])) }
    }

    /// Asks the listener's daemon to end the play; its `finished` reports it.
    func stop(_ id: ItemID, now: Bool = false) -> Bool {
        guard let index = forwarded.firstIndex(where: { $0.local == id }) else { return false }
        forwarded[index].stopAsked = true
        if let remote = forwarded[index].remote, send(.cancel(.ids([remote]))) { awaiting.append(nil) }
        if now {
            let play = forwarded.remove(at: index)
            post(
                .ended(
                    id: play.local, heardFrames: play.heard, totalFrames: nil, sampleRate: play.sampleRate,
                    end: .stopped,
                    details: PlayDetails(devices: DeviceList([route]), frames: play.heard)))
            if forwarded.isEmpty { post(.devicesClosed([route])) }
        }
        return true
    }

    /// What arrived: replies and events, turned into the engine's reports.
    func serve() {
        let (lines, oversized) = connection.readLines()
        for line in lines {
            for fd in line.descriptors { Glibc.close(fd) }
            guard let message = try? DaemonMessage.decode(line.bytes) else { continue }
            switch message {
            case .reply(let reply): answered(reply)
            case .event(let event): happened(event)
            }
        }
        if oversized { connection.sendAndClose([]) }
    }

    private func answered(_ reply: Reply) {
        guard !awaiting.isEmpty else { return }
        guard let local = awaiting.removeFirst(), let index = forwarded.firstIndex(where: { $0.local == local }) else {
            return
        }
        if case .failure(let error) = reply {
            return giveUp(local, reason: "\(name)'s announce refused it (\(error.message))")
        }
        forwarded[index].remote = reply.ids?.first
        // Held there behind the listener's pause: not the machine's queue's to wait for.
        if reply.pausedSince != nil || forwarded[index].remote == nil {
            return giveUp(
                local,
                reason: forwarded[index].remote == nil ? "\(name)'s announce gave no id" : "\(name)'s queue is paused")
        }
        // Stopped before the answer came: asked now.
        if forwarded[index].stopAsked, let remote = forwarded[index].remote, send(.cancel(.ids([remote]))) {
            awaiting.append(nil)
        }
    }

    private func happened(_ event: Event) {
        guard let id = event.id, let index = forwarded.firstIndex(where: { $0.remote == id }) else { return }
        let play = forwarded[index]
        // Another process's number: bounded before it becomes frames (and a spool checkpoint).
        let heard = min(max(event.heard ?? 0, 0), TimeSpan.longest.seconds)
        let frames = heard.isFinite ? Int64((heard * Double(play.sampleRate)).rounded()) : 0
        switch event.event {
        case .waiting:
            // Held there (paused, a busy or lost device, other audio) before it started.
            if play.heard == 0, event.reason != nil, event.reason != .queued {
                giveUp(play.local, reason: "\(name)'s announce holds it")
            }
        case .started:
            forwarded[index].startBy = nil
            post(
                .started(
                    id: play.local, device: route, format: event.format ?? "?", buffering: "through \(name)'s announce",
                    sampleRate: play.sampleRate, totalFrames: play.total))
        case .progress:
            forwarded[index].heard = frames
            post(.progress(id: play.local, framesPlayed: frames, sampleRate: play.sampleRate, totalFrames: nil))
        case .finished:
            forwarded.remove(at: index)
            let end: PlaybackEnd =
                switch event.outcome?.kind {
                case .played?: .finished
                case .cancelled? where play.stopAsked: .stopped
                case .failed?:
                    .failed(
                        code: event.outcome?.code ?? AnnounceError.internalExitCode,
                        message: "through \(name)'s announce: \(event.outcome?.reason ?? "failed")")
                default:
                    .failed(
                        code: Outcome.notPlayedExitCode,
                        message:
                            "\(name)'s announce ended it: \(event.outcome.map { $0.reason ?? $0.kind.rawValue } ?? "?")"
                    )
                }
            post(
                .ended(
                    id: play.local, heardFrames: frames, totalFrames: play.total, sampleRate: play.sampleRate, end: end,
                    details: PlayDetails(
                        devices: DeviceList([route]), format: event.format, warning: event.warning, frames: frames)))
            if forwarded.isEmpty { post(.devicesClosed([route])) }
        default:
            break
        }
    }

    /// A play that cannot go on here: back to the queue with what was heard, the device held
    /// as lost, so it goes on there (or waits for it) from that point.
    private func lost(_ play: Forwarded, reason: String) {
        // One being stopped ends as stopped: a cancel must not bring it back.
        if play.stopAsked {
            return post(
                .ended(
                    id: play.local, heardFrames: play.heard, totalFrames: nil, sampleRate: play.sampleRate,
                    end: .stopped,
                    details: PlayDetails(devices: DeviceList([route]), frames: play.heard)))
        }
        var details = PlayDetails(devices: DeviceList([device]), frames: play.heard)
        details.deviceTrouble = .lost(device: device, reason: reason)
        post(
            .ended(
                id: play.local, heardFrames: play.heard, totalFrames: nil, sampleRate: play.sampleRate,
                end: .failed(code: 69, message: reason), details: details))
    }

    /// The connection is over: every play on it comes back.
    func close(reason: String) {
        if !forwarded.isEmpty { logger.warning("\(name)'s announce left (\(reason)): its plays go on here") }
        for play in forwarded { lost(play, reason: "\(name)'s announce left: \(reason)") }
        if !forwarded.isEmpty { post(.devicesClosed([route])) }
        forwarded.removeAll()
        awaiting.removeAll()
        connection.sendAndClose([])
    }

    /// One request line, its descriptors with its first byte; false when the link is gone.
    private func send(_ request: Request, descriptors: [Int32] = []) -> Bool {
        var bytes = WireProtocol.encode(request)
        if !descriptors.isEmpty {
            // The descriptors go with the line's first byte: nothing may still wait before it.
            connection.flush()
            guard !connection.wantsToWrite else { return false }
            let sent = bytes.withUnsafeBytes { buffer in
                descriptors.withUnsafeBufferPointer {
                    announce_send_descriptors(connection.fd, buffer.baseAddress, 1, $0.baseAddress, Int32($0.count))
                }
            }
            guard sent == 1 else { return false }
            bytes.removeFirst()
        }
        connection.send(bytes)
        return !connection.dead
    }
}
