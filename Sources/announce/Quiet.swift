import AnnounceClient
import AnnounceModel
import AnnounceSystem
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

private let quietSwitchNames = QuietSwitch.allCases.map { $0.rawValue }

/// `announce quiet [on|off|until HH:MM] [--json]`: the silent switch (DESIGN §3).
struct Quiet: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "quiet",
        abstract: "The silent switch: quiet on, off, until a time; alone, show whether it is quiet.",
        discussion: """
            In quiet mode items of category ambient and solo-ambient (the default) end as \
            `silenced` (exit 75) instead of playing; playback and multi-route still play. With \
            the config file's quiet-level (a night level such as -15dB) they play that much lower \
            instead, and exit 0. An item already playing finishes. Quiet mode is on with `announce quiet on`, until a time \
            with `announce quiet until HH:MM` (then the quiet hours apply again), or during the \
            config file's quiet-hours. `announce quiet off` means sound now, even inside quiet \
            hours, until the next quiet-hours window starts. The switch is kept in the runtime \
            directory, so it survives daemon restarts; setting it starts a daemon when none \
            runs, showing it needs none.

            EXAMPLES
              announce quiet on
              announce quiet until 07:30
              announce quiet off
              announce quiet --json
            """)

    @Argument(
        help: ArgumentHelp("on, off or until; nothing: show the state.", valueName: "state"),
        completion: .list(quietSwitchNames))
    var state: String?

    @Argument(
        help: ArgumentHelp("With until: the local time quiet mode ends (the next one to come).", valueName: "HH:MM"))
    var clockTime: String?

    @Flag(help: "Print the state as one JSON object.")
    var json = false

    @OptionGroup var verbosity: QuietFlag

    func validate() throws {
        guard let state else {
            if clockTime != nil { throw ValidationError("Give a state (on, off, until) before a time.") }
            return
        }
        guard let position = QuietSwitch(rawValue: state.lowercased()) else {
            throw ValidationError("Unknown quiet state '\(state)'; use on, off or until HH:MM.")
        }
        if position == .until {
            guard let time = clockTime else {
                throw ValidationError("quiet until needs a time, e.g. 'announce quiet until 07:30'.")
            }
            do { _ = try TimeOfDay(validating: time) } catch { throw ValidationError("until \(time): \(error)") }
        } else if clockTime != nil {
            throw ValidationError("quiet \(position.rawValue) takes no time.")
        }
    }

    func run() throws {
        let logger = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        do {
            if let state, let position = QuietSwitch(rawValue: state.lowercased()) {
                let request: QuietRequest
                switch position {
                case .on: request = .on
                case .off: request = .off
                case .until:
                    // validate() has parsed the time.
                    guard let until = clockTime.flatMap(TimeOfDay.init(parsing:))?.nextOccurrence() else {
                        throw AnnounceError.usage("quiet until needs a time, HH:MM")
                    }
                    request = .until(until)
                }
                // The switch must hold for the next play, so a daemon is started if none runs.
                guard let client = try DaemonClient.connect(autoStart: true) else { return }
                _ = try client.call(.quiet(request))
                guard let status = try client.call(.status).status else {
                    throw AnnounceError.internal("status reply without status")
                }
                show(status.quietState)
                return
            }
            if let client = try DaemonClient.connect(autoStart: false) {
                guard let status = try client.call(.status).status else {
                    throw AnnounceError.internal("status reply without status")
                }
                return show(status.quietState)
            }
            // No daemon: the same rules on the same files, as the next daemon will see them.
            let runtime = try RuntimeDirectory.forClient(RuntimeDirectory.clientTarget())
            let (user, warnings) = UserConfiguration.load()
            for warning in warnings { logger.warning("\(warning)") }
            let mode = QuietMode(
                setting: runtime.loadQuietSetting(), hours: user.quietHours, level: user.quietLevel,
                localMinutes: QuietMode.systemLocalMinutes)
            show(mode.state(at: SystemClock.wall()))
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }

    /// `quiet: on (announce quiet until 07:30)` and the quiet hours, or one JSON object.
    private func show(_ state: QuietState) {
        if json { return print(jsonLine(Versioned(state))) }
        var reason = state.reason
        if state.setting == .until, let until = state.until { reason = "announce quiet until \(localTimeText(until))" }
        output("quiet: \(state.quiet ? "on" : "off") (\(reason))")
        if case .lowered(let decibels)? = state.level {
            output(
                "night level: \(QuietLevel.lowered(decibels)): ambient items and alerts play that much lower, not silenced"
            )
        }
        if !state.hours.isEmpty { output("quiet hours: \(state.hours.map(\.description).joined(separator: ", "))") }
    }
}
