import AnnounceClient
import AnnounceModel
import AnnounceSystem
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "events",
        abstract: "Print the daemon's events as they happen, until interrupted.",
        discussion: """
            Events: queued, started, progress (25/50/75%: the highest mark passed since the \
            last one), interruption-began, interruption-ended (should-resume), finished (with \
            the outcome), title (a live stream's title changed), paused, resumed, quiet (the \
            quiet switch was changed), \
            device-opened, device-closed, route-change (a device was lost or is back). Starts \
            the daemon if none runs; exits 69 if it \
            goes away.
            """)

    @Flag(help: "One JSON object per line, as in docs/protocol.md.")
    var json = false

    @OptionGroup var verbosity: QuietFlag

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        do {
            guard let client = try DaemonClient.connect(autoStart: true) else { return }
            _ = try client.call(.events)
            while let message = try client.next() {
                guard case .event(let event) = message else { continue }
                // Unbuffered: a pipe reader sees each event as it happens.
                if json || !verbosity.quiet { writeToStdout((json ? jsonLine(event) : describe(event)) + "\n") }
            }
            throw AnnounceError.unavailable("the daemon went away")
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }

    private func describe(_ event: Event) -> String {
        var text = event.event.rawValue
        if let id = event.id { text += " \(id)" }
        if let path = event.path { text += " \(path)" }
        if let outcome = event.outcome { text += " \(outcome.kind.rawValue)" }
        if let reason = event.reason { text += " (\(reason))" }
        if let percent = event.percent { text += " \(percent)%" }
        if event.event == .title { text += event.title.map { " \"\($0)\"" } ?? " (none)" }
        if let shouldResume = event.shouldResume { text += " should-resume=\(shouldResume)" }
        if let device = event.device { text += " device=\(device)" }
        if let warning = event.warning { text += " [\(warning)]" }
        return text
    }
}
