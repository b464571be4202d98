import AnnounceClient
import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import ArgumentParser
import FoundationEssentials
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `-q, --quiet` on every subcommand: errors only. Set once, by `CLILogHandler.bootstrap`.
nonisolated(unsafe) private var errorsOnly = false

/// A command's normal output on stdout (a line is added), left out with `-q`. What `--json`
/// asks for is printed even so: a program asked for it explicitly.
func output(_ text: String) {
    if !errorsOnly { print(text) }
}

/// `-q, --quiet` for every subcommand.
struct QuietFlag: ParsableArguments {
    @Flag(
        long: "quiet", short: "q",
        help: "Errors only: no output (but what --json asks for), no warnings, no reason line for exit 75.")
    var quiet = false
}

/// One line on stderr, the way every error and warning is shown.
/// One line, whatever the message holds: a file name with a newline or control characters is
/// escaped as in daemon.log, so cron mail and log parsers still see one line per error.
func printError(_ message: String) {
    writeToStderr("announce: \(escapedForLog(message))\n")
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

extension TimeSpan {
    /// For `@Option(transform:)`: a bad duration is reported with why (`--delay 1x: unknown unit 'x'; …`).
    static func argument(_ text: String) throws -> TimeSpan { try TimeSpan(validating: text) }
}

/// `-1`, `0.5`: a number as the user would have written it, for messages.
func numberText(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
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
        printError(
            "\(event.level == .warning ? "warning: " : event.level < .warning ? "\(event.level): " : "")\(event.message)"
        )
    }

    static func bootstrap(quiet: Bool) -> Logger {
        errorsOnly = quiet
        let level = configuredLogLevel(otherwise: quiet ? .error : .warning)
        LoggingSystem.bootstrap { _ in CLILogHandler(logLevel: level) }
        let logger = Logger(label: "announce")
        ALSALogBridge.install(logger)
        return logger
    }
}

/// Shell completion of `--device`: the playback PCMs `announce devices` lists.
let deviceCompletion = CompletionKind.custom { _, _, _ in
    // ALSA's own diagnostics must not reach the terminal while a shell completes.
    ALSALogBridge.install(Logger(label: "announce", factory: { _ in SwiftLogNoOpLogHandler() }))
    return (try? Outputs.backend.devices(probing: false).map(\.name.rawValue)) ?? []
}

/// A CaseIterable String enum as an option's value, its cases the values.
protocol CaseArgument: ExpressibleByArgument, CaseIterable, RawRepresentable<String> {}

// The values ArgumentParser's defaults give a CaseIterable String enum, written out: its generic
// defaults (a key path and string interpolation per case) run each time the option is defined, four
// times a parse. (No descriptions: the defaults find each case's description equal to its name.)
extension CaseArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
    public static var allValueDescriptions: [String: String] { [:] }
}

extension Priority: CaseArgument {}
extension InterruptAction: CaseArgument {}
extension IfBusy: CaseArgument {}
extension IfOtherAudio: CaseArgument {}

extension TimeOfDay {
    /// For `@Option(transform:)`: `--at 25:00` says why it is not a time.
    static func argument(_ text: String) throws -> TimeOfDay { try TimeOfDay(validating: text) }

    /// Seconds since the epoch of the next time the clock shows this (today or tomorrow).
    func nextOccurrence(after now: time_t = time(nil)) -> Double {
        var clock = now
        var fields = tm()
        localtime_r(&clock, &fields)
        fields.tm_hour = Int32(hour)
        fields.tm_min = Int32(minute)
        fields.tm_sec = Int32(second)
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

/// `path` made absolute against the working directory (`absoluteFile`), as text: for a
/// `file:` device's FILE, which ALSA takes as a string.
func absolutePath(_ path: String) -> String {
    absoluteFile(FileName(path)).text
}

/// One JSON object on one line, keys sorted.
func jsonLine<Value: Encodable>(_ value: Value) -> String {
    String(decoding: JSONCoding.encode(value, orElse: "{}"), as: UTF8.self)
}

/// The `v` in every JSON object announce prints (docs/json.md). It goes up only when a field is
/// removed or changes meaning; new fields keep it.
let jsonSchemaVersion = 1

/// `value`'s fields, plus `v` (and for status, `running`): one object, not a wrapper.
struct Versioned<Value: Encodable>: Encodable {
    var value: Value
    var running: Bool?

    init(_ value: Value, running: Bool? = nil) {
        self.value = value
        self.running = running
    }

    private enum Keys: String, CodingKey { case v, running }

    func encode(to encoder: Encoder) throws {
        try value.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(jsonSchemaVersion, forKey: .v)
        try container.encodeIfPresent(running, forKey: .running)
    }
}

/// `HH:MM` (or `HH:MM:SS`) local time, with the date in front when it is not today.
func localTimeText(_ seconds: Double, withSeconds: Bool = false) -> String {
    guard var clock = time_t(exactly: seconds.rounded(.down)) else { return "?" }
    var now = time(nil)
    var fields = tm()
    var today = tm()
    guard localtime_r(&clock, &fields) != nil, localtime_r(&now, &today) != nil else { return "?" }
    let sameDay = fields.tm_year == today.tm_year && fields.tm_yday == today.tm_yday
    var text = [CChar](repeating: 0, count: 40)
    strftime(&text, text.count, (sameDay ? "" : "%Y-%m-%d ") + (withSeconds ? "%H:%M:%S" : "%H:%M"), &fields)
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The log level `ANNOUNCE_LOG` names (debug, info, warning, error...), else `fallback`:
/// one rule for the client's messages and the daemon's log.
func configuredLogLevel(otherwise fallback: Logger.Level) -> Logger.Level {
    getenv("ANNOUNCE_LOG").flatMap { Logger.Level(rawValue: String(cString: $0)) } ?? fallback
}
