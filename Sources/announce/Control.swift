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
    // Each command is named as its request's op.
    static var configuration: CommandConfiguration {
        CommandConfiguration.subcommand(Control.request.operation.rawValue, abstract: abstract)
    }

    /// The command's one-line help.
    private static var abstract: String {
        switch Control.request {
        case .skip: "End the playing item (outcome cancelled) and go on with the queue."
        case .pause:
            "Hold the queue; the playing item stops where it was heard to. Kept until resume, also with no daemon running."
        case .resume: "Let the queue go on; a paused item resumes with a short fade-in."
        case .stop:
            "Silence: cancel the playing item, everything queued or scheduled, and every mixing stream and alert."
        case .clear: "Cancel everything queued or scheduled; the playing item finishes."
        default: preconditionFailure("\(Control.request) is not a control request")
        }
    }

    @OptionGroup var verbosity: QuietFlag

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        let request = Control.request
        do {
            let runtime = try RuntimeDirectory.forClient(RuntimeDirectory.clientTarget())
            guard let client = try DaemonClient.connectToQueue(runtime: runtime) else {
                if request == .pause || request == .resume { try runtime.setPaused(request == .pause) }
                return
            }
            _ = try client.call(request)
        } catch {  // typed: AnnounceError
            throw reportedExit(error)
        }
    }
}

/// A control command's request; one type each, as every subcommand is a type of its own.
protocol ControlOperation {
    static var request: Request { get }
}

enum SkipOperation: ControlOperation { static let request = Request.skip }
enum PauseOperation: ControlOperation { static let request = Request.pause }
enum ResumeOperation: ControlOperation { static let request = Request.resume }
enum StopOperation: ControlOperation { static let request = Request.stop }
enum ClearOperation: ControlOperation { static let request = Request.clear }

typealias Skip = ControlCommand<SkipOperation>
typealias Pause = ControlCommand<PauseOperation>
typealias Resume = ControlCommand<ResumeOperation>
typealias Stop = ControlCommand<StopOperation>
typealias Clear = ControlCommand<ClearOperation>
