import AnnounceKit
import ArgumentParser
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// One line on stderr, the way every error and warning is shown.
func printError(_ message: String) {
    writeToStderr("announce: \(message)\n")
}

func writeToStderr(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// Prints `error` as one line and exits with its documented status.
func reportedExit(_ error: AnnounceError) -> ExitCode {
    printError(error.description)
    return ExitCode(error.exitCode)
}

extension TimeSpan: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// Warnings as `announce: warning: …` lines; debug output with ANNOUNCE_LOG=debug.
struct CLILogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        printError("\(event.level == .warning ? "warning: " : event.level < .warning ? "\(event.level): " : "")\(event.message)")
    }

    static func bootstrap(quiet: Bool) -> Logger {
        let level: Logger.Level = getenv("ANNOUNCE_LOG").flatMap { Logger.Level(rawValue: String(cString: $0)) }
            ?? (quiet ? .error : .warning)
        LoggingSystem.bootstrap { _ in CLILogHandler(logLevel: level) }
        let logger = Logger(label: "announce")
        ALSALogBridge.install(logger)
        return logger
    }
}

struct DeviceOption: ParsableArguments {
    @Option(name: .shortAndLong, help: "ALSA PCM to play on (see `announce devices`).")
    var device: String = "default"
}
