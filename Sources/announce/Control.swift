import AnnounceKit
import ArgumentParser

/// skip, pause, resume, stop and clear: one request each, no output, exit 0.
/// Without a daemon there is nothing to control, which is not an error; but pause and resume
/// set the pause a daemon starts with (the `paused` file in the runtime directory).
private func sendControl(_ operation: Operation) throws {
    _ = CLILogHandler.bootstrap(quiet: false)
    do {
        let runtime = try RuntimeDirectory.prepare()
        guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime) else {
            if operation == .pause || operation == .resume { try runtime.setPaused(operation == .pause) }
            return
        }
        _ = try client.call(Request(operation))
    } catch {
        throw reportedExit(error)
    }
}

struct Skip: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "skip", abstract: "End the playing item (outcome cancelled) and go on with the queue.")
    func run() throws { try sendControl(.skip) }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Hold the queue; the playing item stops where it was heard to. Kept until resume, also with no daemon running.")
    func run() throws { try sendControl(.pause) }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Let the queue go on; a paused item resumes with a short fade-in.")
    func run() throws { try sendControl(.resume) }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stop", abstract: "Silence: cancel the playing item, everything queued or scheduled, and every mixing stream and alert.")
    func run() throws { try sendControl(.stop) }
}

struct Clear: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Cancel everything queued or scheduled; the playing item finishes.")
    func run() throws { try sendControl(.clear) }
}
