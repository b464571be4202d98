import ArgumentParser
import Logging
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem
import AnnounceClient
import AnnounceSources
import AnnounceOutput

// Options of play and alert are named explicitly, with the names ArgumentParser would derive from
// the properties: it derives them (camelCase to kebab-case, a Character at a time) every time an
// option is defined, and one parse of `play` defines each of its options four times (~1.1 M
// instructions, 6% of the client's start).

/// `--volume` or `--gain`, for `play` and `alert`.
struct VolumeFlags: ParsableArguments {
    // .unconditional: "--volume -1" must be out of range, not a missing value.
    @Option(name: .customLong("volume"), parsing: .unconditional, help: "Linear volume, 0 to 1 (not with --gain).")
    var volume: Double?

    // .unconditional: "--gain -6" must read -6 as the value, not as an option.
    @Option(name: .customLong("gain"), parsing: .unconditional, help: ArgumentHelp("Gain in dB, at most \(Int(Limits.maxGainDecibels)) (negative is quieter; not with --volume).", valueName: "dB"))
    var gain: Double?

    func validate() throws {
        if volume != nil && gain != nil { throw ValidationError("Give --volume or --gain, not both.") }
        if let volume, !(0...1).contains(volume) { throw ValidationError("--volume \(numberText(volume)): out of range 0…1") }
        if let gain, !gain.isFinite || gain > Limits.maxGainDecibels {
            throw ValidationError("--gain \(numberText(gain)): out of range; at most \(numberText(Limits.maxGainDecibels)) dB")
        }
    }

    /// The linear gain the daemon applies.
    var linearGain: Float { Float(volume ?? gain.map { pow(10, $0 / 20) } ?? 1) }
}

struct PlaybackFlags: ParsableArguments {
    @OptionGroup var level: VolumeFlags

    @Option(name: .customLong("pan"), parsing: .unconditional, help: "Balance, -1 (left) to 1 (right). A mono clip with a pan plays in stereo.")
    var pan: Double = 0

    @Option(name: .customLong("loops"), parsing: .unconditional, help: "Extra passes after the first (at most \(Limits.maxLoops)); -1 repeats until stopped.")
    var loops: Int = 0

    @Option(name: .customLong("start"), parsing: .unconditional, help: ArgumentHelp("Where the first pass starts: 1.5s, 500ms, 1m30s, 0:24.9 (before the end of the file).", valueName: "time"), transform: TimeSpan.argument)
    var start: TimeSpan?

    // .unconditional: "--rate -1" must be out of range, not a missing value.
    @Option(name: .customLong("rate"), parsing: .unconditional, help: ArgumentHelp("Tempo with the pitch kept, \(numberText(Limits.rate.lowerBound)) to \(numberText(Limits.rate.upperBound)): 2 plays twice as fast. Positions, lengths and --start stay in the file's time.", valueName: "factor"))
    var rate: Double?

    @Option(name: .customLong("pitch"), parsing: .unconditional, help: ArgumentHelp("Pitch shift in semitones, \(numberText(Limits.pitch.lowerBound)) to \(numberText(Limits.pitch.upperBound)), with the length kept: 12 is an octave up.", valueName: "semitones"))
    var pitch: Double?

    @Flag(name: .customLong("skip-silence"), help: "Trim the silence at both ends and cut every pause longer than the config file's silence-gap (default 300 ms) to that length.")
    var skipSilence = false

    func validate() throws {
        // The daemon's rules, in the options' words.
        if let problem = ItemRequest.panProblem(Float(pan)) { throw ValidationError(optionText(problem, given: numberText(pan))) }
        if let problem = ItemRequest.loopsProblem(loops) { throw ValidationError(optionText(problem, given: "\(loops)")) }
        if let rate, let problem = ItemRequest.rateProblem(rate) { throw ValidationError(optionText(problem, given: numberText(rate))) }
        if let pitch, let problem = ItemRequest.pitchProblem(pitch) { throw ValidationError(optionText(problem, given: numberText(pitch))) }
    }

    var options: PlaybackOptions {
        PlaybackOptions(gain: level.linearGain, pan: Float(pan), loops: loops, start: start)
    }

    /// The clip's reshaping fields; what changes nothing goes as absent.
    func reshape(_ clip: inout Clip) {
        clip.rate = rate == 1 ? nil : rate
        clip.pitch = pitch == 0 ? nil : pitch
        clip.skipSilence = skipSilence ? true : nil
    }
}

// Computed once (globals are lazy), not each time an option is defined: four times a parse.
private let sessionCategoryNames = SessionCategory.allCases.map { $0.rawValue }
private let sessionModeNames = SessionMode.allCases.map { $0.rawValue }

/// The session an item plays in (DESIGN §3): category, mode and options, and `--duck-level`, `--if-busy`.
struct SessionFlags: ParsableArguments {
    @Option(name: .customLong("category"), help: ArgumentHelp("""
        Session category: ambient (mixes with whatever plays), solo-ambient (the default; one at a time, \
        in queue order), playback (plays in quiet mode) or multi-route (as playback, on every --device given). \
        Quiet mode silences ambient and solo-ambient.
        """, valueName: "category"), completion: .list(sessionCategoryNames))
    var category: String?

    @Option(name: .customLong("mode"), help: ArgumentHelp("What the audio is: default, spoken-audio (paused, not talked over, by --interrupt-spoken-audio) or voice-prompt.", valueName: "mode"), completion: .list(sessionModeNames))
    var mode: String?

    @Flag(name: .customLong("mix-with-others"), help: "Mix over whatever plays instead of waiting its turn (playback and multi-route; ambient always mixes, solo-ambient never).")
    var mixWithOthers = false

    @Flag(name: .customLong("duck-others"), help: "While this plays, lower every other stream by the duck level (it still waits its turn unless it mixes).")
    var duckOthers = false

    @Flag(name: .customLong("interrupt-spoken-audio"), help: "Pause the streams whose mode is spoken-audio until this ends; with ambient, playback or multi-route, also mix.")
    var interruptSpokenAudio = false

    @Flag(name: .customLong("no-notify-others"), help: "When this ends, leave the streams it interrupted paused until `announce resume` (default: they resume).")
    var noNotifyOthers = false

    // .unconditional: "--duck-level -12" must read -12 as the value.
    @Option(name: .customLong("duck-level"), parsing: .unconditional, help: ArgumentHelp("How far --duck-others lowers the others: \(Int(UserConfiguration.duckLevelRange.lowerBound)) to \(Int(UserConfiguration.duckLevelRange.upperBound)) dB, as -12, -12dB or '-12 dB' (default: the config file's duck-level, else \(Int(UserConfiguration.defaultDuckLevel)) dB).", valueName: "dB"))
    var duckLevel: String?

    @Option(name: .customLong("if-busy"), help: ArgumentHelp("When another program holds the device: wait (the default, for at most --expire when given) or fail (exit 69).", valueName: "wait|fail"))
    var ifBusy: IfBusy = .default

    @Option(name: .customLong("if-other-audio"), help: ArgumentHelp("When another application plays as this is about to start: play (the default), duck (as --duck-others), wait until it stops (for at most --expire when given) or skip (silenced, exit 75).", valueName: "play|duck|wait|skip"))
    var ifOtherAudio: IfOtherAudio = .play

    func validate() throws {
        do throws(AnnounceError) {
            let session = try audioSession()
            _ = try duckDecibels()
            if ifOtherAudio == .wait && session.lane == .mixed {
                throw AnnounceError.usage(ItemProblem.waitingMixable(session).description)
            }
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The session the flags describe; throws AudioSession's own one-line messages (64).
    func audioSession() throws(AnnounceError) -> AudioSession {
        let options = SessionOptions(mixWithOthers: mixWithOthers, duckOthers: duckOthers,
                                     interruptSpokenAudioAndMixWithOthers: interruptSpokenAudio,
                                     notifyOthersOnDeactivation: !noNotifyOthers)
        return AudioSession(category: try category.map { text throws(AnnounceError) in try SessionCategory(parsing: text) } ?? .default,
                            options: options,
                            mode: try mode.map { text throws(AnnounceError) in try SessionMode(parsing: text) } ?? .default)
    }

    /// `--duck-level` in dB, or nil for the daemon's level.
    func duckDecibels() throws(AnnounceError) -> Double? {
        guard let duckLevel else { return nil }
        let range = UserConfiguration.duckLevelRange
        if let level = UserConfiguration.parseDecibels(duckLevel) { return level }
        if let level = UserConfiguration.parseAnyDecibels(duckLevel), level > range.upperBound {
            throw .usage("--duck-level \(duckLevel): ducking lowers the other streams, so give a level of 0 dB or below, like -12dB")
        }
        throw .usage("--duck-level must be \(UserConfiguration.duckLevelRule), not '\(duckLevel)'")
    }

    /// Lines for `announce: warning: …`: options that do nothing as given.
    func warnings() -> [String] {
        var lines = (try? audioSession().warnings) ?? []
        if duckLevel != nil && !duckOthers { lines.append("--duck-level has no effect without --duck-others") }
        return lines
    }

    /// Sets the session fields of `request`; the defaults go as absent fields.
    func apply(to request: inout ItemRequest) throws(AnnounceError) {
        let session = try audioSession()
        request.session = session == .default ? nil : session
        request.duckLevel = try duckDecibels()
        request.ifBusy = ifBusy == .default ? nil : ifBusy
        request.ifOtherAudio = ifOtherAudio == .play ? nil : ifOtherAudio
    }
}

struct QueueFlags: ParsableArguments {
    @Option(name: .customLong("priority"), help: "low, normal, high or critical. Higher preempts lower; critical is never preempted.")
    var priority: Priority = .default

    @Flag(name: .customLong("no-interrupt"), help: "Wait for the playing item even when this one outranks it.")
    var noInterrupt = false

    @Option(name: .customLong("on-interrupt"), help: "When preempted: resume (where it was heard to, with a short fade-in), restart or drop.")
    var onInterrupt: InterruptAction = .default

    @Option(name: .customLong("drop-after"), parsing: .unconditional, help: ArgumentHelp("A preempted item that had this fraction (0 to 1) heard is dropped.", valueName: "fraction"))
    var dropAfter: Double = QueueItem.defaultDropAfter

    @Option(name: .customLong("tag"), help: "A label for cancel --tag and --replace.")
    var tag: String?

    @Flag(name: .customLong("replace"), help: "Queued, scheduled and playing items with the same --tag end as replaced: the newest message wins.")
    var replace = false

    @Option(name: .customLong("expire"), parsing: .unconditional, help: ArgumentHelp("Give up (expired, 75) if not started within this time (10s, 5m, 1m30s, 1:30), counted from --at/--delay when given.", valueName: "duration"), transform: TimeSpan.argument)
    var expire: TimeSpan?

    @Option(name: .customLong("delay"), parsing: .unconditional, help: ArgumentHelp("Play no sooner than this long from now (not with --at).", valueName: "duration"), transform: TimeSpan.argument)
    var delay: TimeSpan?

    @Option(name: .customLong("at"), help: ArgumentHelp("Play at this local time (the next one to come).", valueName: "HH:MM[:SS]"), transform: TimeOfDay.argument)
    var at: TimeOfDay?

    func validate() throws {
        if let problem = ItemRequest.dropAfterProblem(dropAfter) { throw ValidationError(optionText(problem, given: numberText(dropAfter))) }
        if let tag, let problem = ItemRequest.tagProblem(tag) { throw ValidationError(optionText(problem)) }
        if replace && tag == nil { throw ValidationError("--replace needs a --tag.") }
        if delay != nil && at != nil { throw ValidationError("Give --delay or --at, not both.") }
    }

    func request(for clip: Clip) -> ItemRequest {
        ItemRequest(clip: clip, priority: priority, interrupts: noInterrupt ? false : nil, onInterrupt: onInterrupt,
                    dropAfter: dropAfter, tag: tag, replace: replace ? true : nil, at: at?.nextOccurrence(),
                    delay: delay?.seconds, expire: expire?.seconds)
    }
}

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Queue audio files and wait until they have been heard.",
        discussion: """
            The files go to the user's announce daemon, which plays one queue for every \
            script, cron job and terminal; when none answers, one is started that exits after \
            \(DaemonClient.autoStartIdleExit) with nothing queued and no client connected. Formats are recognised by \
            content, not extension: WAV (RF64, RIFX, Wave64), CAF, AIFF/AIFC, AU, FLAC, Ogg \
            Vorbis/Opus/FLAC, MP3 and the other containers libsndfile reads; formats it does \
            not play (AAC, WMA, ...) are named (65). \
            Every file is checked before anything is queued, so a broken file never leaves \
            half an announcement. With -, audio on stdin is read to its end (at most \
            \(Limits.maxMediaBytes >> 20) MiB) into the daemon's runtime directory before it is \
            queued, so it is kept as a file is; messages and events call it stdin. An http://, \
            https:// or file:// URL is downloaded by the daemon into the same place and plays \
            while it arrives (redirects followed, the system's CAs, your proxy variables; the \
            config file's connect-timeout and stall-timeout; after a crash the download goes on \
            with a Range request); it is called by its URL; a download that fails is 66, a page \
            that is not audio 65; --cache keeps it. With --stream, http(s) URLs are live radio instead: the \
            daemon connects when the item plays and plays until stopped or --duration (see \
            --stream).

            Sessions (as AVAudioSession): items of the default category solo-ambient play one \
            at a time in queue order; ambient items, and playback or multi-route items with \
            --mix-with-others or --interrupt-spoken-audio, start at once and mix over whatever \
            plays. When another program holds the device, --if-busy wait (the default) waits \
            for it, for at most --expire when given; --if-busy fail exits 69 naming the holder. \
            Another application's call (a stream of media.role phone or communication) pauses \
            every playing item until it ends, then they resume; --if-other-audio decides what an \
            item does when other audio plays as it is about to start.

            Exit status: 0 played to the end (with --no-wait: queued); 75 not played to the \
            end (dropped, cancelled, replaced, expired, silenced by quiet mode or \
            --if-other-audio skip), with the \
            reason on stderr; 64 usage error; 65/66 bad input; 69 device unavailable (or busy \
            with --if-busy fail) or the daemon cannot run. With several files, the first one that did not play decides. \
            Ctrl-C (or SIGTERM, SIGHUP) while waiting cancels this command's items and exits \
            128 + the signal (130 for Ctrl-C).

            EXAMPLES
              announce play backup-done.mp3 --priority high
              espeak-ng --stdout "Backup done" | announce play -   # audio on stdin
              curl -s https://nas/doorbell.flac | announce play chime.wav - --priority high
              announce play https://nas.local/media/doorbell.flac   # plays while it downloads
              announce play --cache https://ha.local/local/chime.mp3  # kept, revalidated next time
              # live radio under everything, its title on the progress line and in status:
              announce play --stream --category ambient --no-wait https://radio/live.mp3
              announce play --tag build --replace build-failed.wav   # newest status wins
              announce play reminder.flac --at 09:30 --expire 10m --no-wait
              announce play --category playback alarm.wav   # plays even in quiet mode
              # a doorbell over announce's own music stream, which is 20 dB lower meanwhile:
              announce play --category ambient --duck-others --duck-level -20dB bell.wav
              # a podcast that traffic news pauses, then lets resume:
              announce play --category playback --mode spoken-audio podcast.mp3 --no-wait
              announce play --category ambient --interrupt-spoken-audio traffic.wav
              # both sound cards at once:
              announce play --category multi-route -d plughw:0 -d plughw:1 fire.wav
              announce play --if-busy fail --expire 30s status.wav || echo "device busy"
              announce play --rate 1.5 --skip-silence voicemail.wav   # pauses cut, then 1.5× as fast
            """)

    @Argument(help: ArgumentHelp("Audio files to play in order, names of installed sounds (see FILES in announce(1)), - for audio on stdin (read to its end, at most \(Limits.maxMediaBytes >> 20) MiB, before it is queued), or an http(s):// or file:// URL (the daemon downloads it, at most \(Limits.maxMediaBytes >> 20) MiB, and plays it as it arrives)."), completion: .file())
    var files: [String]

    @Flag(inversion: .prefixedNo, help: "Keep each URL's download in the cache ($XDG_CACHE_HOME/announce/downloads) and revalidate a kept one (ETag, If-Modified-Since) instead of downloading it again; default: the config file's [download] cache.")
    var cache: Bool?

    @OptionGroup var output: DeviceFlags
    @OptionGroup var playback: PlaybackFlags
    @OptionGroup var session: SessionFlags
    @OptionGroup var queue: QueueFlags
    @OptionGroup var delivery: DeliveryFlags
    @OptionGroup var stream: StreamFlags
    @OptionGroup var zones: ZoneFlags

    /// The argument that reads stdin.
    static let stdinArgument = "-"

    func validate() throws {
        if files.filter({ $0 == Self.stdinArgument }).count > 1 {
            throw ValidationError("- (stdin) is given more than once; stdin can be read once")
        }
        try output.validate(session: session, queue: queue)
        try zones.validate(devices: output)
        try stream.validate(files: files, playback: playback)
    }

    func run() throws {
        // Audio stored in the daemon's media directory (stdin): the queue's once acknowledged.
        var stored: [MediaFile] = []
        var handover = Handover.refused
        defer { for media in stored { handover == .refused ? media.discard() : media.release() } }
        let paths = files.map { $0 == Self.stdinArgument ? Clip.stdinLabel : $0 }
        // Files are opened by their bytes (a name need not be UTF-8), shown as the parser decoded them.
        let fileNames = RawArguments.fileNames(files)
        try submit(names: paths.map { String($0.split(separator: "/").last ?? "") }, paths: paths, delivery: delivery,
                   session: session, zones: zones, handover: { handover = $0 }) { () throws(AnnounceError) in
            try zip(files, fileNames).map { argument, file throws(AnnounceError) in
                let clip: Clip
                if stream.isOn {
                    clip = try stream.clip(argument, playback: playback, devices: output.resolved())
                } else if let input = try StoredInput.store(argument) {
                    stored.append(input.file)
                    do throws(AnnounceError) {
                        clip = try checkedClip(FileName(input.file.path), label: input.label, media: input.file.name)
                    } catch {
                        throw input.explain(error)
                    }
                } else if let scheme = Clip.urlScheme(of: argument) {
                    clip = try urlClip(argument, scheme: scheme)
                } else {
                    clip = try checkedClip(SoundNames.resolve(file))
                }
                var request = queue.request(for: clip)
                try session.apply(to: &request)
                return request
            }
        }
    }

    /// Opens the file as the daemon will, so bad input fails here with the
    /// caller's own path in the message, before anything is queued. For `media` (stdin),
    /// the clip names it `label`, the input as the user gave it, not the daemon's file.
    private func checkedClip(_ file: FileName, label: String? = nil, media: String? = nil) throws(AnnounceError) -> Clip {
        let decoder = try DecoderRegistry.open(file)
        let info = decoder.info
        let options = playback.options
        if let problem = options.startProblem(in: info, path: label ?? file.text) { throw problem }
        // The daemon's working directory is /: a file: device's FILE is the caller's.
        let devices = try output.resolved()
        var clip = Clip(path: file.text, device: devices.first, extraDevices: devices.count > 1 ? Array(devices.dropFirst()) : nil,
                        gain: options.gain, pan: options.pan,
                        loops: options.loops, start: options.start?.seconds, environment: AudioEnvironment.caller(), media: media)
        if let label { clip.path = label } else { clip.file = absoluteFile(file) }
        playback.reshape(&clip)
        clip.seconds = decoder.lengthIsExact ? programSeconds(info, options).map(clip.wallSeconds) : nil
        return clip
    }

    /// The whole program's length in the file's time, for the wait estimate others are told
    /// (as wall time: `Clip.wallSeconds`): past any real wait, none.
    private func programSeconds(_ info: AudioFileInfo, _ options: PlaybackOptions) -> Double? {
        let startFrame = options.start?.frames(atRate: info.sampleRate) ?? 0
        guard let frames = PlaybackOptions.programFrames(fileFrames: info.frames, startFrame: startFrame, loops: options.loops) else {
            return nil
        }
        let seconds = Double(frames) / Double(info.sampleRate)
        return seconds <= TimeSpan.longest.seconds ? seconds : nil
    }
}

/// A problem of the daemon's rules (`ItemProblem`) in the options' words; `given` is the
/// option's value as typed. The daemon says it in the request's (`ItemProblem.description`).
func optionText(_ problem: ItemProblem, given: String = "") -> String {
    switch problem {
    case .pan: "--pan \(given): out of range \(rangeText(Limits.pan))"
    case .loops: "--loops \(given): out of range -1 (forever) to \(Limits.maxLoops)"
    case .dropAfter: "--drop-after \(given): out of range \(rangeText(Limits.dropAfter))"
    case .rate: "--rate \(given): out of range \(rangeText(Limits.rate))"
    case .pitch: "--pitch \(given): out of range \(rangeText(Limits.pitch)) semitones"
    case .tag: "--tag must be 1 to \(Limits.maxTagBytes) bytes"
    case .timedMixable(let session): "a mixable session (\(session)) starts at once; --delay and --at need a queued one"
    case .device(let problem): optionText(problem)
    case .stream(let problem): optionText(problem)
    default: problem.description
    }
}

/// `-1…1`: a limit as the options' messages give it.
private func rangeText<Bound: BinaryFloatingPoint>(_ range: ClosedRange<Bound>) -> String {
    numberText(Double(range.lowerBound)) + "…" + numberText(Double(range.upperBound))
}

/// A `--device` problem in the options' words (the daemon says it in the request's, `DeviceProblem.description`).
func optionText(_ problem: DeviceProblem) -> String {
    switch problem {
    case .emptyName: "--device needs a name"
    case .nameTooLong: "--device names are at most \(Limits.maxDeviceNameBytes) bytes"
    case .relativeFile(let name): "--device \(name): FILE must be an absolute path"
    case .severalNeedMultiRoute: "several --device need --category multi-route"
    case .tooMany(let count): "at most \(Limits.maxDevices) --device, not \(count)"
    case .givenTwice(let name): "--device \(name) is given twice"
    }
}
