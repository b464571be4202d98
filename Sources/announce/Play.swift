import AnnounceKit
import ArgumentParser
import Logging
#if canImport(Glibc)
import Glibc
#endif

struct PlaybackFlags: ParsableArguments {
    @Option(help: "Linear volume, 0 to 1.")
    var volume: Double?

    // .unconditional: "--gain -6" must read -6 as the value, not as an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Gain in dB (negative is quieter).", valueName: "dB"))
    var gain: Double?

    @Option(parsing: .unconditional, help: "Balance, -1 (left) to 1 (right). A mono clip with a pan plays in stereo.")
    var pan: Double = 0

    @Option(parsing: .unconditional, help: "Extra passes after the first; -1 repeats until stopped.")
    var loops: Int = 0

    @Option(help: ArgumentHelp("Where the first pass starts: 1.5s, 500ms, 2m.", valueName: "time"))
    var start: TimeSpan?

    func validate() throws {
        if volume != nil && gain != nil { throw ValidationError("Give --volume or --gain, not both.") }
        if let volume, !(0...1).contains(volume) { throw ValidationError("--volume must be between 0 and 1, not \(volume).") }
        if let gain, !gain.isFinite || gain > 24 { throw ValidationError("--gain must be at most 24 dB, not \(gain).") }
        if !(-1...1).contains(pan) { throw ValidationError("--pan must be between -1 and 1, not \(pan).") }
        if loops < -1 { throw ValidationError("--loops must be -1 (forever) or more, not \(loops).") }
    }

    var options: PlaybackOptions {
        let linear = volume ?? gain.map { pow(10, $0 / 20) } ?? 1
        return PlaybackOptions(gain: Float(linear), pan: Float(pan), loops: loops, start: start)
    }
}

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play audio files in order and wait until they have been heard.",
        discussion: """
            Formats are recognised by content, not extension: WAV/RF64, CAF, AIFF/AIFC, FLAC,
            Ogg Vorbis/Opus and MP3. Every file is checked before anything plays, so a missing
            or broken file never leaves half an announcement.
            """)

    @Argument(help: "Audio files to play in order.")
    var files: [String]

    @OptionGroup var device: DeviceOption
    @OptionGroup var playback: PlaybackFlags

    @Flag(name: .shortAndLong, help: "No progress display and no warnings.")
    var quiet = false

    func run() throws {
        let logger = CLILogHandler.bootstrap(quiet: quiet)
        var decoders: [any AudioDecoder] = []
        do {
            for path in files { decoders.append(try DecoderRegistry.open(path)) }
            let engine = PlaybackEngine(device: device.device)
            let display = isatty(STDERR_FILENO) == 1 && !quiet ? ProgressLine() : nil
            for decoder in decoders {
                let name = String(decoder.path.split(separator: "/").last ?? Substring(decoder.path))
                let report = try engine.play(decoder, options: playback.options) { display?.show(name, $0) }
                display?.finish()
                logger.debug("\(decoder.path): \(report.framesPlayed) frames as \(report.outputFormat) on \(device.device)")
                if let warning = report.truncationWarning { logger.warning("\(decoder.path): \(warning)") }
                if report.recoveries > 0 { logger.warning("\(decoder.path): recovered from \(report.recoveries) underrun(s)") }
            }
        } catch {
            throw reportedExit(error)
        }
    }
}

/// The one-line progress display a terminal gets while a clip plays.
final class ProgressLine {
    func show(_ name: String, _ progress: PlaybackProgress) {
        let rate = Double(progress.sampleRate)
        let elapsed = TimeSpan.format(Double(progress.framesPlayed) / rate)
        let total = progress.totalFrames.map { " / " + TimeSpan.format(Double($0) / rate) } ?? ""
        writeToStderr("\r\u{1B}[K▶ \(name)  \(elapsed)\(total)")
    }

    func finish() { writeToStderr("\r\u{1B}[K") }
}
