import AnnounceClient
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import ArgumentParser
import Logging

#if canImport(Glibc)
    import Glibc
#endif

struct Play: QueuingCommand {
    static let configuration = CommandConfiguration.subcommand(
        "play",
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

    @Argument(
        help: ArgumentHelp(
            "Audio files to play in order, names of installed sounds (see FILES in announce(1)), - for audio on stdin (read to its end, at most \(Limits.maxMediaBytes >> 20) MiB, before it is queued), or an http(s):// or file:// URL (the daemon downloads it, at most \(Limits.maxMediaBytes >> 20) MiB, and plays it as it arrives)."
        ), completion: .file())
    var files: [String]

    @Flag(
        inversion: .prefixedNo,
        help:
            "Keep each URL's download in the cache ($XDG_CACHE_HOME/announce/downloads) and revalidate a kept one (ETag, If-Modified-Since) instead of downloading it again; default: the config file's [download] cache."
    )
    var cache: Bool?

    @OptionGroup var output: DeviceFlags
    @OptionGroup var playback: PlaybackFlags
    @OptionGroup var chimes: ChimeFlags
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
        try checkItemOptions()
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
        try submit(
            names: paths.map { String($0.split(separator: "/").last ?? "") }, paths: paths, command: self,
            handover: { handover = $0 }
        ) { (handed: FileHandover?) throws(AnnounceError) in
            try zip(files, fileNames).map { argument, file throws(AnnounceError) in
                let clip: Clip
                if stream.isOn {
                    clip = try stream.clip(argument, for: self)
                } else if let handed, Clip.urlScheme(of: argument) == nil {
                    clip = try handedClip(argument == Self.stdinArgument ? nil : SoundNames.resolve(file), to: handed)
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
                return try itemRequest(for: clip)
            }
        }
    }

    /// For the system queue: the file (nil: stdin) opened with the caller's rights, checked as
    /// `checkedClip` does through that very descriptor, and handed over with the request.
    private func handedClip(_ file: FileName?, to handed: FileHandover) throws(AnnounceError) -> Clip {
        if file == nil, isatty(STDIN_FILENO) == 1 {
            throw .usage("\(Clip.stdinLabel): is a terminal; pipe audio into announce play -")
        }
        let label = file.map { absoluteFile($0).text } ?? Clip.stdinLabel
        let (index, checked) =
            if let file { try handed.add(file, label: label) } else {
                try handed.addContents(of: STDIN_FILENO, label: label)
            }
        var clip: Clip
        do throws(AnnounceError) { clip = try checkedClip(checked, label: label) } catch {
            throw error.naming(checked.text, as: label)
        }
        clip.handed = HandedFiles(audio: index)
        return clip
    }

    /// Opens the file as the daemon will, so bad input fails here with the
    /// caller's own path in the message, before anything is queued. For `media` (stdin),
    /// the clip names it `label`, the input as the user gave it, not the daemon's file.
    private func checkedClip(_ file: FileName, label: String? = nil, media: String? = nil) throws(AnnounceError) -> Clip
    {
        let decoder = try DecoderRegistry.open(file)
        let info = decoder.info
        let options = playback.options
        if let problem = options.startProblem(in: info, path: label ?? file.text) { throw problem }
        var clip = try itemClip(file.text, media: media)
        if let label { clip.path = label } else { clip.file = absoluteFile(file) }
        clip.seconds = decoder.lengthIsExact ? programSeconds(info, options).map(clip.wallSeconds) : nil
        return clip
    }

    /// The whole program's length in the file's time, for the wait estimate others are told
    /// (as wall time: `Clip.wallSeconds`): past any real wait, none.
    private func programSeconds(_ info: AudioFileInfo, _ options: PlaybackOptions) -> Double? {
        let startFrame = options.start?.frames(atRate: info.sampleRate) ?? 0
        guard
            let frames = PlaybackOptions.programFrames(
                fileFrames: info.frames, startFrame: startFrame, loops: options.loops)
        else {
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
