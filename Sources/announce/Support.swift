import AnnounceKit
import ArgumentParser
import FoundationEssentials
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// One line on stderr, the way every error and warning is shown.
func printError(_ message: String) {
    writeToStderr("announce: \(message)\n")
}

func writeToStdout(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(STDOUT_FILENO, $0.baseAddress, $0.count) }
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

extension Priority: ExpressibleByArgument {}
extension InterruptAction: ExpressibleByArgument {}

/// `--at HH:MM[:SS]`, local time.
struct ClockTime: ExpressibleByArgument {
    var hour: Int32
    var minute: Int32
    var second: Int32

    init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false).map { Int32($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }),
              let hour = parts[0], let minute = parts[1], (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        let second = parts.count == 3 ? parts[2]! : 0
        guard (0...59).contains(second) else { return nil }
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Seconds since the epoch of the next time the clock shows this (today or tomorrow).
    func nextOccurrence(after now: time_t = time(nil)) -> Double {
        var clock = now
        var fields = tm()
        localtime_r(&clock, &fields)
        fields.tm_hour = hour
        fields.tm_min = minute
        fields.tm_sec = second
        fields.tm_isdst = -1
        var target = mktime(&fields)
        if target <= now {
            fields.tm_mday += 1  // mktime normalises the date and the DST change
            fields.tm_isdst = -1
            target = mktime(&fields)
        }
        return Double(target)
    }
}

/// `path` made absolute against the working directory: the daemon has its own.
func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    guard let cwd = getcwd(nil, 0) else { return path }
    defer { free(cwd) }
    let base = String(cString: cwd)
    return (base == "/" ? "" : base) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
}

/// One JSON object on one line, keys sorted.
func jsonLine<Value: Encodable>(_ value: Value) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
}
