import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import ArgumentParser

/// The options of every queued item, `play`'s and `say`'s alike: where and how it plays, its
/// chimes, session and queue rules, the hosts it plays on, and what the client prints and
/// whether it waits. `--device` and the printing flags are its own: a group of their own would
/// cost every parse of `play` about 1 M instructions more (ArgumentParser reflects each group).
struct ItemFlags: ParsableArguments {
    @Option(
        name: [.customLong("device"), .customShort("d")],
        help: ArgumentHelp(
            """
            ALSA PCM to play on (see `announce devices`); default: the daemon's. With --category multi-route, \
            give it up to \(Limits.maxDevices) times to play on every one at once.
            """, valueName: "device"), completion: deviceCompletion)
    var device: [DeviceName] = []

    @OptionGroup var playback: PlaybackFlags
    @OptionGroup var chimes: ChimeFlags
    @OptionGroup var session: SessionFlags
    @OptionGroup var queue: QueueFlags

    @Flag(name: .customLong("no-wait"), help: "Print the item ids once they are safely queued, and exit 0.")
    var noWait = false

    @Flag(name: .customLong("json"), help: "Print each outcome (or, with --no-wait, the ids) as a JSON object.")
    var json = false

    @Flag(
        name: [.customLong("quiet"), .customShort("q")],
        help:
            "Errors only: no progress display, no ids with --no-wait, no warnings but that the queue is paused, no reason line for exit 75 (what --json asks for is still printed)."
    )
    var quiet = false

    @OptionGroup var zones: ZoneFlags

    /// The daemon's rules for clip.device and clip.extraDevices and for timed sessions, in the
    /// options' words. A bad --category is SessionFlags' to report. Called from the command's
    /// `validate()`, after its own checks: ArgumentParser would run a group's `validate()` first.
    func check() throws {
        if let audioSession = try? session.audioSession(),
            let problem = ItemRequest.timingProblem(audioSession, timed: queue.delay != nil || queue.at != nil)
        {
            throw ValidationError(optionText(problem))
        }
        let category = (try? session.audioSession().category) ?? .default
        if let problem = DeviceName.problem(
            device: device.first, extra: Array(device.dropFirst()), category: category,
            relativeFileAllowed: true)
        {
            throw ValidationError(optionText(problem))
        }
        try zones.validate(devices: device)
    }

    /// The clip of `path` with the options' devices, level, pan, passes and reshaping.
    func clip(_ path: String, speech: Speech? = nil, media: String? = nil, stream: LiveStream? = nil)
        throws(AnnounceError) -> Clip
    {
        let options = playback.options
        // The daemon's working directory is /: a file: device's FILE is the caller's.
        let devices = try device.map { name throws(AnnounceError) in
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
    func request(for clip: Clip) throws(AnnounceError) -> ItemRequest {
        var request = queue.request(for: clip)
        try session.apply(to: &request)
        try chimes.apply(to: &request)
        return request
    }
}
