import AnnounceClient
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import ArgumentParser
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// The option groups play, say and alert share (each subcommand has a file of its own).
// Options of play and alert are named explicitly, with the names ArgumentParser would derive from
// the properties: it derives them (camelCase to kebab-case, a Character at a time) every time an
// option is defined, and one parse of `play` defines each of its options four times (~1.1 M
// instructions, 6% of the client's start).

/// `--volume` or `--gain`, and `--loudness`, for `play`, `say` and `alert`.
struct VolumeFlags: ParsableArguments {
    @Option(signed: "volume", help: "Linear volume, 0 to 1 (not with --gain).")
    var volume: Double?

    @Option(
        signed: "gain",
        help: "Gain in dB, at most \(Int(Limits.maxGainDecibels)) (negative is quieter; not with --volume).",
        valueName: "dB")
    var gain: Double?

    @Option(
        signed: "loudness",
        help:
            "Loudness it plays at, in LUFS from \(Int(Limits.loudness.lowerBound)) to \(Int(Limits.loudness.upperBound)), its true peak kept under \(Int(Loudness.ceiling)) dBTP; off plays the file's own level, sample for sample. Default: the config file's loudness, else -16. --volume and --gain apply on top.",
        valueName: "LUFS|off")
    var loudness: String?

    func validate() throws {
        if volume != nil && gain != nil { throw ValidationError("Give --volume or --gain, not both.") }
        if let loudness, LoudnessTarget(parsing: loudness) == nil {
            throw ValidationError("--loudness \(loudness): must be \(LoudnessTarget.rule)")
        }
        if let volume, !(0...1).contains(volume) {
            throw ValidationError("--volume \(numberText(volume)): out of range 0…1")
        }
        if let gain, !gain.isFinite || gain > Limits.maxGainDecibels {
            throw ValidationError(
                "--gain \(numberText(gain)): out of range; at most \(numberText(Limits.maxGainDecibels)) dB")
        }
    }

    /// The linear gain the daemon applies.
    var linearGain: Float { Float(volume ?? gain.map { pow(10, $0 / 20) } ?? 1) }

    /// `--loudness`; nil: the daemon's config file's.
    var target: LoudnessTarget? { loudness.flatMap(LoudnessTarget.init(parsing:)) }
}

struct PlaybackFlags: ParsableArguments {
    @OptionGroup var level: VolumeFlags

    @Option(signed: "pan", help: "Balance, -1 (left) to 1 (right). A mono clip with a pan plays in stereo.")
    var pan: Double = 0

    @Option(
        signed: "loops", help: "Extra passes after the first (at most \(Limits.maxLoops)); -1 repeats until stopped.")
    var loops: Int = 0

    @Option(
        duration: "start",
        help: "Where the first pass starts: 1.5s, 500ms, 1m30s, 0:24.9 (before the end of the file).",
        valueName: "time")
    var start: TimeSpan?

    @Option(
        signed: "rate",
        help:
            "Tempo with the pitch kept, \(numberText(Limits.rate.lowerBound)) to \(numberText(Limits.rate.upperBound)): 2 plays twice as fast. Positions, lengths and --start stay in the file's time.",
        valueName: "factor")
    var rate: Double?

    @Option(
        signed: "pitch",
        help:
            "Pitch shift in semitones, \(numberText(Limits.pitch.lowerBound)) to \(numberText(Limits.pitch.upperBound)), with the length kept: 12 is an octave up.",
        valueName: "semitones")
    var pitch: Double?

    @Flag(
        long: "skip-silence",
        help:
            "Trim the silence at both ends and cut every pause longer than the config file's silence-gap (default 300 ms) to that length."
    )
    var skipSilence = false

    func validate() throws {
        // The daemon's rules, in the options' words.
        if let problem = ItemRequest.panProblem(Float(pan)) {
            throw ValidationError(optionText(problem, given: numberText(pan)))
        }
        if let problem = ItemRequest.loopsProblem(loops) {
            throw ValidationError(optionText(problem, given: "\(loops)"))
        }
        if let rate, let problem = ItemRequest.rateProblem(rate) {
            throw ValidationError(optionText(problem, given: numberText(rate)))
        }
        if let pitch, let problem = ItemRequest.pitchProblem(pitch) {
            throw ValidationError(optionText(problem, given: numberText(pitch)))
        }
    }

    var options: PlaybackOptions {
        PlaybackOptions(gain: level.linearGain, pan: Float(pan), loops: loops, start: start)
    }

    /// The clip's loudness and reshaping fields; what changes nothing goes as absent.
    func reshape(_ clip: inout Clip) {
        clip.loudness = level.target
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
    @Option(
        long: "category",
        help: """
            Session category: ambient (mixes with whatever plays), solo-ambient (the default; one at a time, \
            in queue order), playback (plays in quiet mode) or multi-route (as playback, on every --device given). \
            Quiet mode silences ambient and solo-ambient.
            """, completion: .list(sessionCategoryNames))
    var category: String?

    @Option(
        long: "mode",
        help:
            "What the audio is: default, spoken-audio (paused, not talked over, by --interrupt-spoken-audio) or voice-prompt.",
        completion: .list(sessionModeNames))
    var mode: String?

    @Flag(
        long: "mix-with-others",
        help:
            "Mix over whatever plays instead of waiting its turn (playback and multi-route; ambient always mixes, solo-ambient never)."
    )
    var mixWithOthers = false

    @Flag(
        long: "duck-others",
        help: "While this plays, lower every other stream by the duck level (it still waits its turn unless it mixes).")
    var duckOthers = false

    @Flag(
        long: "interrupt-spoken-audio",
        help:
            "Pause the streams whose mode is spoken-audio until this ends; with ambient, playback or multi-route, also mix."
    )
    var interruptSpokenAudio = false

    @Flag(
        long: "no-notify-others",
        help: "When this ends, leave the streams it interrupted paused until `announce resume` (default: they resume).")
    var noNotifyOthers = false

    @Option(
        signed: "duck-level",
        help:
            "How far --duck-others lowers the others: \(Int(UserConfiguration.duckLevelRange.lowerBound)) to \(Int(UserConfiguration.duckLevelRange.upperBound)) dB, as -12, -12dB or '-12 dB' (default: the config file's duck-level, else \(Int(UserConfiguration.defaultDuckLevel)) dB).",
        valueName: "dB")
    var duckLevel: String?

    @Option(
        long: "if-busy",
        help:
            "When another program holds the device: wait (the default, for at most --expire when given) or fail (exit 69).",
        valueName: "wait|fail")
    var ifBusy: IfBusy = .default

    @Option(
        long: "if-other-audio",
        help:
            "When another application plays as this is about to start: play (the default), duck (as --duck-others), wait until it stops (for at most --expire when given) or skip (silenced, exit 75).",
        valueName: "play|duck|wait|skip")
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
        let options = SessionOptions(
            mixWithOthers: mixWithOthers, duckOthers: duckOthers,
            interruptSpokenAudioAndMixWithOthers: interruptSpokenAudio,
            notifyOthersOnDeactivation: !noNotifyOthers)
        return AudioSession(
            category: try category.map { text throws(AnnounceError) in try SessionCategory(parsing: text) } ?? .default,
            options: options,
            mode: try mode.map { text throws(AnnounceError) in try SessionMode(parsing: text) } ?? .default)
    }

    /// `--duck-level` in dB, or nil for the daemon's level.
    func duckDecibels() throws(AnnounceError) -> Double? {
        guard let duckLevel else { return nil }
        let range = UserConfiguration.duckLevelRange
        if let level = UserConfiguration.parseDecibels(duckLevel) { return level }
        if let level = UserConfiguration.parseAnyDecibels(duckLevel), level > range.upperBound {
            throw .usage(
                "--duck-level \(duckLevel): ducking lowers the other streams, so give a level of 0 dB or below, like -12dB"
            )
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
    @Option(
        long: "priority",
        help: "low, normal, high or critical. Higher preempts lower; critical is never preempted.")
    var priority: Priority = .default

    @Flag(long: "no-interrupt", help: "Wait for the playing item even when this one outranks it.")
    var noInterrupt = false

    @Option(
        long: "on-interrupt",
        help: "When preempted: resume (where it was heard to, with a short fade-in), restart or drop.")
    var onInterrupt: InterruptAction = .default

    @Option(
        signed: "drop-after", help: "A preempted item that had this fraction (0 to 1) heard is dropped.",
        valueName: "fraction")
    var dropAfter: Double = QueueItem.defaultDropAfter

    @Option(long: "tag", help: "A label for cancel --tag and --replace.")
    var tag: String?

    @Flag(
        long: "replace",
        help: "Queued, scheduled and playing items with the same --tag end as replaced: the newest message wins.")
    var replace = false

    @Option(
        duration: "expire",
        help:
            "Give up (expired, 75) if not started within this time (10s, 5m, 1m30s, 1:30), counted from --at/--delay when given."
    )
    var expire: TimeSpan?

    @Option(duration: "delay", help: "Play no sooner than this long from now (not with --at).")
    var delay: TimeSpan?

    @Option(
        name: .customLong("at"), parsing: .unconditional,  // "-1:00" is a bad time, not a missing one
        help: ArgumentHelp("Play at this local time (the next one to come).", valueName: "HH:MM[:SS]"),
        transform: TimeOfDay.argument)
    var at: TimeOfDay?

    func validate() throws {
        if let problem = ItemRequest.dropAfterProblem(dropAfter) {
            throw ValidationError(optionText(problem, given: numberText(dropAfter)))
        }
        if let tag, let problem = ItemRequest.tagProblem(tag) { throw ValidationError(optionText(problem)) }
        if replace && tag == nil { throw ValidationError("--replace needs a --tag.") }
        if delay != nil && at != nil { throw ValidationError("Give --delay or --at, not both.") }
    }

    func request(for clip: Clip) -> ItemRequest {
        ItemRequest(
            clip: clip, priority: priority, interrupts: noInterrupt ? false : nil, onInterrupt: onInterrupt,
            dropAfter: dropAfter, tag: tag, replace: replace ? true : nil, at: at?.nextOccurrence(),
            delay: delay?.seconds, expire: expire?.seconds)
    }
}

/// `--chime` and `--chime-after`, for `play` and `say`: sounds played before and after the item,
/// in the same item (DESIGN §4, Chimes).
struct ChimeFlags: ParsableArguments {
    @Option(
        long: "chime",
        help:
            "A sound played first, in the same item: a name as play finds sounds (chime, attention) or a file; none turns off the config file's [chime] default for the priority.",
        valueName: "sound|none")
    var chime: String?

    @Option(
        long: "chime-after",
        help: "A sound played after it, in the same item (closing, or a file).", valueName: "sound")
    var chimeAfter: String?

    /// `request`'s chimes: the options', else the config file's for its priority; each resolved
    /// to an absolute path and opened as the daemon will (66, 65 naming it) before anything is queued.
    func apply(to request: inout ItemRequest) throws(AnnounceError) {
        request.clip.chime =
            if let chime { try Self.checked(chime, as: "--chime \(chime)") } else {
                Self.configured(for: request.priority ?? .default)
            }
        request.clip.chimeAfter = try chimeAfter.flatMap { sound throws(AnnounceError) in
            try Self.checked(sound, as: "--chime-after \(sound)")
        }
    }

    /// The config file's chime for `priority`. Nothing in the file is fatal: one that cannot
    /// play is a warning (once), and the item plays without it.
    private static func configured(for priority: Priority) -> String? {
        let file = UserConfiguration.defaultPath()
        guard let sound = UserConfiguration.load(path: file).configuration.chimes[priority] else { return nil }
        do throws(AnnounceError) {
            return try checked(sound, as: "\(file ?? "config"): [chime] \(priority.rawValue) = \(sound)")
        } catch {
            let warning = "\(error.description); it plays without a chime"
            if warned.withLock({ $0.insert(warning).inserted }) { Logger(label: "announce").warning("\(warning)") }
            return nil
        }
    }
    private static let warned = Mutex<Set<String>>([])

    /// The sound's absolute path; nil for none. Its errors name it as `label`: `--chime ding: no such file`.
    private static func checked(_ sound: String, as label: String) throws(AnnounceError) -> String? {
        guard sound != "none" else { return nil }
        let path = absolutePath(SoundNames.resolve(sound))
        do throws(AnnounceError) { _ = try DecoderRegistry.open(FileName(path)) } catch {
            throw error.naming(path, as: label)
        }
        return path
    }
}
