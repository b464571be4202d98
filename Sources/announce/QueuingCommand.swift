import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import ArgumentParser

/// A command that queues items, `play` or `say`: the option groups every item takes (where and
/// how it plays, its chimes, session and queue rules, what the client prints, the hosts it plays
/// on), declared by each command itself. Not a group of groups: ArgumentParser's debug-build
/// checks multiply with every level of nesting (a usage error of `play` took 2 s of CPU).
protocol QueuingCommand: ParsableCommand {
    var output: DeviceFlags { get }
    var playback: PlaybackFlags { get }
    var chimes: ChimeFlags { get }
    var session: SessionFlags { get }
    var queue: QueueFlags { get }
    var delivery: DeliveryFlags { get }
    var zones: ZoneFlags { get }
}

extension QueuingCommand {
    /// The daemon's rules for clip.device and clip.extraDevices and for timed sessions, in the
    /// options' words. A bad --category is SessionFlags' to report. Called from the command's
    /// `validate()`, after its own checks.
    func checkItemOptions() throws {
        let audioSession = try? session.audioSession()
        if let audioSession,
            let problem = ItemRequest.timingProblem(audioSession, timed: queue.delay != nil || queue.at != nil)
        {
            throw ValidationError(optionText(problem))
        }
        let category = audioSession?.category ?? .default
        let device = output.device
        if let problem = DeviceName.problem(
            device: device.first, extra: Array(device.dropFirst()), category: category,
            relativeFileAllowed: true)
        {
            throw ValidationError(optionText(problem))
        }
        try zones.validate(devices: device)
    }

    /// The clip of `path` with the options' devices, level, pan, passes and reshaping.
    func itemClip(_ path: String, speech: Speech? = nil, media: String? = nil, stream: LiveStream? = nil)
        throws(AnnounceError) -> Clip
    {
        let options = playback.options
        // The daemon's working directory is /: a file: device's FILE is the caller's.
        let devices = try output.device.map { name throws(AnnounceError) in
            try Outputs.backend.resolvingFile(name, absolute: absolutePath)
        }
        var clip = Clip(
            path: path, device: devices.first, extraDevices: devices.count > 1 ? Array(devices.dropFirst()) : nil,
            gain: options.gain, pan: options.pan, loops: options.loops, start: options.start?.seconds,
            environment: AudioEnvironment.caller(), speech: speech, media: media, stream: stream)
        playback.reshape(&clip)
        return clip
    }

    /// The request that queues `clip` with the options' queue rules, session and chimes.
    func itemRequest(for clip: Clip) throws(AnnounceError) -> ItemRequest {
        var request = queue.request(for: clip)
        try session.apply(to: &request)
        try chimes.apply(to: &request)
        return request
    }
}
