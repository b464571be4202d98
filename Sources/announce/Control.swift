import AnnounceClient
import AnnounceModel
import AnnounceSystem
import ArgumentParser

/// skip, pause, resume, stop and clear: one request each, no output, exit 0.
/// Without a daemon there is nothing to control, which is not an error; but pause and resume
/// set the pause a daemon starts with (the `paused` file in the runtime directory).
/// One generic command for the five: its `-q` costs one set of conformance records (which
/// every client start scans) instead of five.
struct ControlCommand<Control: ControlOperation>: ParsableCommand {
    static var configuration: CommandConfiguration { Control.configuration }

    @OptionGroup var verbosity: QuietFlag

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        let request = Control.request
        do {
            let runtime = try RuntimeDirectory.forClient(RuntimeDirectory.clientTarget())
            guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime) else {
                if request == .pause || request == .resume { try runtime.setPaused(request == .pause) }
                return
            }
            _ = try client.call(request)
        } catch {  // typed: AnnounceError
            throw reportedExit(error)
        }
    }
}

protocol ControlOperation {
    static var request: Request { get }
    static var configuration: CommandConfiguration { get }
}

enum SkipOperation: ControlOperation {
    static let request = Request.skip
    static let configuration = CommandConfiguration(
        commandName: "skip", abstract: "End the playing item (outcome cancelled) and go on with the queue.")
}

enum PauseOperation: ControlOperation {
    static let request = Request.pause
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract:
            "Hold the queue; the playing item stops where it was heard to. Kept until resume, also with no daemon running."
    )
}

enum ResumeOperation: ControlOperation {
    static let request = Request.resume
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Let the queue go on; a paused item resumes with a short fade-in.")
}

enum StopOperation: ControlOperation {
    static let request = Request.stop
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Silence: cancel the playing item, everything queued or scheduled, and every mixing stream and alert."
    )
}

enum ClearOperation: ControlOperation {
    static let request = Request.clear
    static let configuration = CommandConfiguration(
        commandName: "clear", abstract: "Cancel everything queued or scheduled; the playing item finishes.")
}

typealias Skip = ControlCommand<SkipOperation>
typealias Pause = ControlCommand<PauseOperation>
typealias Resume = ControlCommand<ResumeOperation>
typealias Stop = ControlCommand<StopOperation>
typealias Clear = ControlCommand<ClearOperation>
