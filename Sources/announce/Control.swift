import AnnounceKit
import ArgumentParser

/// skip, pause, resume, stop and clear: one request each, no output, exit 0.
/// Without a daemon there is nothing to control, which is not an error.
private func sendControl(_ operation: Operation, quiet: Bool) throws {
    _ = CLILogHandler.bootstrap(quiet: quiet)
    do {
        guard let client = try DaemonClient.connect(autoStart: false) else { return }
        _ = try client.call(Request(operation))
    } catch let error as AnnounceError {
        throw reportedExit(error)
    }
}

struct Skip: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "skip", abstract: "End the playing item (outcome cancelled) and go on with the queue.")
    @OptionGroup var verbosity: QuietFlag
    func run() throws { try sendControl(.skip, quiet: verbosity.quiet) }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Hold the queue; the playing item stops where it was heard to.")
    @OptionGroup var verbosity: QuietFlag
    func run() throws { try sendControl(.pause, quiet: verbosity.quiet) }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Let the queue go on; a paused item resumes with a short fade-in.")
    @OptionGroup var verbosity: QuietFlag
    func run() throws { try sendControl(.resume, quiet: verbosity.quiet) }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stop", abstract: "Silence: cancel the playing item, everything queued or scheduled, and every mixing stream and alert.")
    @OptionGroup var verbosity: QuietFlag
    func run() throws { try sendControl(.stop, quiet: verbosity.quiet) }
}

struct Clear: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Cancel everything queued or scheduled; the playing item finishes.")
    @OptionGroup var verbosity: QuietFlag
    func run() throws { try sendControl(.clear, quiet: verbosity.quiet) }
}
