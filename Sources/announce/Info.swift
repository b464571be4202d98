import AnnounceClient
import AnnounceModel
import AnnounceSources
import AnnounceSystem
import ArgumentParser
import FoundationEssentials

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "info",
        abstract: "Show container, codec, rate, channels, frames, duration and loudness of audio files.",
        discussion: """
            Loudness is measured as EBU R128 (ITU-R BS.1770) measures it, with libebur128, as ffmpeg's \
            ebur128 filter does with peak=true: integrated loudness (LUFS), the highest true peak of any \
            channel (dBTP), and the loudness range (LU). A value that cannot be measured (integrated loudness \
            needs 400 ms above -70 LUFS, the range 3 s) is shown as none, and absent from --json.
            """)

    @Argument(help: "Audio files to describe.", completion: .file())
    var files: [String]

    @Flag(help: "One JSON object per file, one per line.")
    var json = false

    @OptionGroup var verbosity: QuietFlag

    struct Description: Codable {
        var path: String
        var container: String
        var codec: String
        var sampleRate: Int
        var channels: Int
        var frames: Int64?
        var duration: Double?
        /// The header's length is not what plays (the file is cut short).
        var truncated: Bool
        /// What is wrong with the file: "truncated: 0.9 of 261.0 s", "damaged data skipped".
        var damage: String?
        var loudness: Loudness
    }

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        var failure: ExitCode?
        // Opened by their bytes (a name need not be UTF-8), shown as the parser decoded them.
        for file in RawArguments.fileNames(files).map(SoundNames.resolve) {
            let path = file.text
            do {
                let decoder = try DecoderRegistry.open(file)
                try decoder.scanForExactLength()
                let info = decoder.info
                // What a play hears, on a decoder of its own (a length scan may change how one reads).
                let loudness = try LoudnessMeter.measure(try DecoderRegistry.open(file))
                let description = Description(
                    path: path, container: info.container.name, codec: info.codec.name,
                    sampleRate: info.sampleRate, channels: info.channels,
                    frames: info.frames, duration: info.durationSeconds,
                    truncated: info.damage?.isTruncation ?? false, damage: info.damage?.description,
                    loudness: loudness)
                json ? print(jsonLine(Versioned(description))) : output(text(description))
            } catch {  // typed: AnnounceError
                // Every error is reported; the exit status is the highest (70 > 66 > 65).
                let code = reportedExit(error)
                failure = failure.map { $0.rawValue >= code.rawValue ? $0 : code } ?? code
            }
        }
        if let failure { throw failure }
    }

    private func text(_ d: Description) -> String {
        // Durations with three decimals, counts as plain integers, everywhere.
        let duration =
            d.duration.map { seconds in
                let milliseconds = Int((seconds * 1000).rounded())
                let fraction = String(milliseconds % 1000)
                return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
            } ?? "unknown"
        return """
            \(d.path)
              container  \(d.container)
              codec      \(d.codec)
              rate       \(d.sampleRate) Hz
              channels   \(d.channels)
              frames     \(d.frames.map(String.init) ?? "unknown")
              duration   \(duration)
              loudness   \(Self.level(d.loudness.integrated, "LUFS")), true peak \(Self.level(d.loudness.truePeak, "dBTP")), range \(Self.level(d.loudness.range, "LU"))
            """ + (d.damage.map { "\n  damage     \($0)" } ?? "")
    }

    /// One decimal, as ffmpeg's ebur128 prints them; `none` where nothing could be measured.
    private static func level(_ value: Double?, _ unit: String) -> String {
        guard let value else { return "none" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10) \(unit)"
    }
}
