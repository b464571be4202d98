import AnnounceKit
import ArgumentParser
import Logging
#if canImport(Glibc)
import Glibc
#endif

struct PlaybackFlags: ParsableArguments {
    @Option(help: "Linear volume, 0 to 1 (not with --gain).")
    var volume: Double?

    // .unconditional: "--gain -6" must read -6 as the value, not as an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Gain in dB, at most 24 (negative is quieter; not with --volume).", valueName: "dB"))
    var gain: Double?

    @Option(parsing: .unconditional, help: "Balance, -1 (left) to 1 (right). A mono clip with a pan plays in stereo.")
    var pan: Double = 0

    @Option(parsing: .unconditional, help: "Extra passes after the first (at most 1000000); -1 repeats until stopped.")
    var loops: Int = 0

    @Option(help: ArgumentHelp("Where the first pass starts: 1.5s, 500ms, 2m, 1h (before the end of the file).", valueName: "time"))
    var start: TimeSpan?

    func validate() throws {
        if volume != nil && gain != nil { throw ValidationError("Give --volume or --gain, not both.") }
        if let volume, !(0...1).contains(volume) { throw ValidationError("--volume must be between 0 and 1, not \(volume).") }
        if let gain, !gain.isFinite || gain > 24 { throw ValidationError("--gain must be at most 24 dB, not \(gain).") }
        if !(-1...1).contains(pan) { throw ValidationError("--pan must be between -1 and 1, not \(pan).") }
        if loops < -1 || loops > QueueItem.maxLoops {
            throw ValidationError("--loops must be -1 (forever) to \(QueueItem.maxLoops), not \(loops).")
        }
    }

    var options: PlaybackOptions {
        let linear = volume ?? gain.map { pow(10, $0 / 20) } ?? 1
        return PlaybackOptions(gain: Float(linear), pan: Float(pan), loops: loops, start: start)
    }
}

struct QueueFlags: ParsableArguments {
    @Option(help: "low, normal, high or critical. Higher preempts lower; critical is never preempted.")
    var priority: Priority = .normal

    @Flag(help: "Wait for the playing item even when this one outranks it.")
    var noInterrupt = false

    @Option(help: "When preempted: resume (where it was heard to, with a short fade-in), restart or drop.")
    var onInterrupt: InterruptAction = .resume

    @Option(help: ArgumentHelp("A preempted item that had this fraction (0 to 1) heard is dropped.", valueName: "fraction"))
    var dropAfter: Double = 0.8

    @Option(help: "A label for cancel --tag and --replace.")
    var tag: String?

    @Flag(help: "Queued, scheduled and playing items with the same --tag end as replaced: the newest message wins.")
    var replace = false

    @Option(help: ArgumentHelp("Give up (expired, 75) if not started within this time (10s, 5m), counted from --at/--delay when given.", valueName: "duration"))
    var expire: TimeSpan?

    @Option(help: ArgumentHelp("Play no sooner than this long from now (not with --at).", valueName: "duration"))
    var delay: TimeSpan?

    @Option(help: ArgumentHelp("Play at this local time (the next one to come).", valueName: "HH:MM[:SS]"))
    var at: TimeOfDay?

    func validate() throws {
        if !(0...1).contains(dropAfter) { throw ValidationError("--drop-after must be between 0 and 1, not \(dropAfter).") }
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
            content, not extension: WAV/RF64, CAF, AIFF/AIFC, FLAC, Ogg Vorbis/Opus and MP3. \
            Every file is checked before anything is queued, so a broken file never leaves \
            half an announcement.

            Exit status: 0 played to the end (with --no-wait: queued); 75 not played to the \
            end (dropped, cancelled, replaced, expired, silenced by quiet mode), with the \
            reason on stderr; 64 usage error; 65/66 bad input; 69 device unavailable or the \
            daemon cannot run. With several files, the first one that did not play decides. \
            Ctrl-C (or SIGTERM, SIGHUP) while waiting cancels this command's items and exits \
            128 + the signal (130 for Ctrl-C).

            EXAMPLES
              announce play backup-done.mp3 --priority high
              announce play --tag build --replace build-failed.wav   # newest status wins
              announce play reminder.flac --at 09:30 --expire 10m --no-wait
              announce play --category playback alarm.wav   # plays even in quiet mode
            """)

    @Argument(help: "Audio files to play in order.")
    var files: [String]

    @Option(name: .shortAndLong, help: "ALSA PCM to play on (see `announce devices`); default: the daemon's.")
    var device: String?

    @Option(help: ArgumentHelp("Session category: ambient, solo-ambient (default), playback or multi-route. Quiet mode silences ambient and solo-ambient.", valueName: "category"))
    var category: String?

    @OptionGroup var playback: PlaybackFlags
    @OptionGroup var queue: QueueFlags

    @Flag(help: "Print the item ids once they are safely queued, and exit 0.")
    var noWait = false

    @Flag(help: "Print each outcome (or, with --no-wait, the ids) as a JSON object.")
    var json = false

    @Flag(name: .shortAndLong, help: "No progress display, no warnings, and no reason line for exit 75; errors are still printed.")
    var quiet = false

    func run() throws {
        let logger = CLILogHandler.bootstrap(quiet: quiet)
        do {
            // Parsed here rather than by ArgumentParser, for SessionCategory's own messages (64).
            let sessionCategory = try category.map { text throws(AnnounceError) in try SessionCategory(parsing: text) }
            let requests = try files.map { path throws(AnnounceError) in
                var request = queue.request(for: try checkedClip(path))
                request.category = sessionCategory
                return request
            }
            guard let client = try DaemonClient.connect(autoStart: true) else { return }
            let display = !noWait && !json && !quiet && isatty(STDERR_FILENO) == 1 ? ProgressLine() : nil
            let ids = try client.call(Request(.play, items: requests, wait: !noWait, progress: display != nil)).ids ?? []
            if noWait {
                print(json ? jsonLine(["ids": ids]) : ids.joined(separator: "\n"))
                return
            }
            client.cancelOnInterrupt(ids: ids)
            let outcomes = try OutcomeWaiter.wait(for: ids, on: client, progress: display != nil) { event in
                guard let display, let index = ids.firstIndex(of: event.id ?? "") else { return }
                let name = String(files[index].split(separator: "/").last ?? "")
                switch event.event {
                case .progress, .started: display.show(name, heard: event.heard ?? 0, duration: event.duration)
                case .interruptionBegan: display.show(name, heard: event.heard ?? 0, duration: event.duration, state: "interrupted")
                case .finished: display.finish()
                default: break
                }
            }
            var status: Int32 = 0
            var printed: Set<String> = []  // one line for a device that failed every item
            for (id, path) in zip(ids, files) {
                guard let event = outcomes[id], let outcome = event.outcome else { continue }
                if json { print(jsonLine(event)) }
                if let frames = event.frames, let format = event.format, let device = event.device {
                    logger.debug("\(path): \(frames) frames as \(format) on \(device)")
                }
                if let warning = event.warning { logger.warning("\(path): \(warning)") }
                switch outcome.kind {
                case .played: break
                case .failed:
                    let message = outcome.reason ?? "\(path): failed"
                    if printed.insert(message).inserted { printError(message) }
                default: if !quiet { printError("\(path): \(outcome.kind.rawValue)\(outcome.reason.map { " (\($0))" } ?? "")") }
                }
                if status == 0 { status = outcome.exitCode }
            }
            if status != 0 { throw ExitCode(status) }
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }

    /// Opens the file as the daemon will, so bad input fails here with the
    /// caller's own path in the message, before anything is queued.
    private func checkedClip(_ path: String) throws(AnnounceError) -> Clip {
        let decoder = try DecoderRegistry.open(path)
        let info = decoder.info
        let options = playback.options
        if let start = options.start, let frames = info.frames, start.frames(atRate: info.sampleRate) >= frames, start.seconds > 0 {
            throw .usage("\(path): --start \(start) is at or past the end (\(TimeSpan(seconds: info.durationSeconds ?? 0)))")
        }
        return Clip(path: absolutePath(path), device: device, gain: options.gain, pan: options.pan,
                    loops: options.loops, start: options.start?.seconds)
    }
}

/// The one-line progress display a terminal gets while a clip plays.
final class ProgressLine {
    func show(_ name: String, heard: Double, duration: Double?, state: String? = nil) {
        let total = duration.map { " / " + TimeSpan.format($0) } ?? ""
        writeToStderr("\r\u{1B}[K\(state == nil ? "▶" : "⏸") \(name)  \(TimeSpan.format(heard))\(total)\(state.map { "  " + $0 } ?? "")")
    }

    func finish() { writeToStderr("\r\u{1B}[K") }
}
