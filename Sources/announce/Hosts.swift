import AnnounceModel
import AnnounceSystem
import AnnounceZones
import ArgumentParser

/// `announce hosts`: the hosts on the config file's [mqtt] broker, from their retained status.
struct Hosts: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "hosts",
        abstract: "List the hosts and zones on the [mqtt] broker: online or offline, playing, queue, quiet.",
        discussion: """
            Each host's daemon keeps its status on the broker (retained); a host whose connection \
            was lost shows as offline (its last will). Exits 69 when the broker cannot be reached \
            within --timeout, 64 without an [mqtt] broker in the config file.
            """)

    @Flag(long: "json", help: "One JSON object per host.")
    var json = false

    @Option(duration: "timeout", help: "How long to try the broker (default 10s).")
    var timeout: TimeSpan?

    func run() throws {
        do {
            let (configuration, warnings) = UserConfiguration.load()
            for warning in warnings { printError("warning: \(warning)") }
            guard let settings = configuration.mqtt else {
                throw AnnounceError.usage("no [mqtt] broker in \(UserConfiguration.defaultPath() ?? "the config file")")
            }
            let sender = try ZoneSender(settings: settings, timeout: timeout?.seconds ?? 10)
            for status in sender.statuses.values.sorted(by: { $0.host < $1.host }) {
                json ? print(jsonLine(status)) : print(Self.line(status))
            }
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }

    /// `kitchen  online  zones downstairs,kitchen  playing doorbell.wav  queued 1  quiet`
    static func line(_ status: HostStatus) -> String {
        var words = [
            status.host, status.state.rawValue,
            "zones " + (status.zones.isEmpty ? "-" : status.zones.joined(separator: ","))
        ]
        if status.state == .online {
            if let playing = status.playing { words.append("playing \(playing)") }
            words.append("queued \(status.queued ?? 0)")
            if status.quiet == true { words.append("quiet") }
            if status.paused == true { words.append("paused") }
        }
        // What a host says of itself comes from the broker: its control characters are not the terminal's.
        return escapedForLog(words.joined(separator: "  "))
    }
}
