import AnnounceClient
import AnnounceModel
import AnnounceSystem
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// `queue` and `status` show the same state: `queue` lists every item,
/// `status` summarises.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "queue", abstract: "What is playing, queued and scheduled.")

    @OptionGroup var flags: StatusFlags

    func run() throws { try showStatus(json: flags.json, listItems: true, quiet: flags.verbosity.quiet) }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "status", abstract: "The daemon's device, what plays, and how many items wait.")

    @OptionGroup var flags: StatusFlags

    func run() throws { try showStatus(json: flags.json, listItems: false, quiet: flags.verbosity.quiet) }
}

/// `--json` and `-q`, for `queue` and `status`.
struct StatusFlags: ParsableArguments {
    @Flag(
        help:
            #"The daemon's state as one JSON object with "running" and "paused", also when no daemon runs (docs/json.md)."#
    )
    var json = false

    @OptionGroup var verbosity: QuietFlag
}

private func showStatus(json: Bool, listItems: Bool, quiet: Bool) throws {
    _ = CLILogHandler.bootstrap(quiet: quiet)
    do {
        let runtime = try RuntimeDirectory.forClient(RuntimeDirectory.clientTarget())
        guard let client = try DaemonClient.connectToQueue(runtime: runtime) else {
            // The pause outlives the daemon: the next one starts paused.
            let since = runtime.pausedSince
            if json {
                return print(jsonLine(Versioned(NoDaemon(paused: since != nil, pausedSince: since), running: false)))
            }
            output(
                "no daemon running; "
                    + (since.map { "the queue is paused (since \(localTimeText($0))); announce resume lets it go on" }
                        ?? "nothing is queued"))
            return
        }
        guard let status = try client.call(.status).status else {
            throw AnnounceError.internal("status reply without status")
        }
        if json { return print(jsonLine(Versioned(status, running: true))) }
        let paused =
            status.paused ? ", paused" + (status.pausedSince.map { " (since \(localTimeText($0)))" } ?? "") : ""
        output(
            "daemon pid \(status.pid), device '\(status.device)' (\(status.deviceOpen ? "open" : "closed"))\(paused)\(status.quiet ? ", quiet" + (status.quietLevel?.decibels.map { " (night level \(QuietLevel.lowered($0)))" } ?? "") : "")"
        )
        if let playing = status.playing { output(line(playing)) } else { output("nothing playing") }
        if let holds = status.holds { output("the queue waits: \(holds.map(\.description).joined(separator: "; "))") }
        if let call = status.call { output("call: \(call) (announce waits until it ends)") }
        if let playing = status.otherAudioPlaying {
            output(
                playing
                    ? "other audio playing: " + (status.otherAudioStreams ?? []).joined(separator: ", ")
                    : "no other audio playing")
        }
        if let other = status.otherAudio.flatMap(otherAudioLine) { output(other) }
        let mixing = status.mixing ?? []
        if listItems {
            for item in mixing { output(line(item, mixing: true)) }
            for item in status.queued + status.scheduled { output(line(item)) }
        } else {
            let mixed = mixing.isEmpty ? "" : ", \(mixing.count) mixing"
            output("\(status.queued.count) queued, \(status.scheduled.count) scheduled\(mixed)")
        }
        if !listItems, let bus = status.sessionBus { output(bus) }
    } catch let error as AnnounceError {
        throw reportedExit(error)
    }
}

/// Other applications' audio, when a duck-others item acts on it (nothing while idle).
private func otherAudioLine(_ other: OtherAudioStatus) -> String? {
    switch other.state {
    case .idle: nil
    case .ducking: "other audio: ducked (\(other.streams) stream\(other.streams == 1 ? "" : "s"))"
    case .noSoundServer: "other audio: nothing to duck, no sound server" + (other.reason.map { " (\($0))" } ?? "")
    }
}

/// `status --json` when no daemon runs.
private struct NoDaemon: Encodable {
    var paused: Bool
    var pausedSince: Double?
}

private func line(_ item: ItemStatus, mixing: Bool = false) -> String {
    let state = mixing ? "mixing" + (item.state == .playing ? "" : " (\(item.state.rawValue))") : item.state.rawValue
    var text = "\(state.padding(12)) \(item.id)  \(item.priority.rawValue.padding(8)) \(item.path)"
    if let title = item.title { text += "  \"\(title)\"" }
    if let heard = item.heard {
        text += "  \(TimeSpan.format(heard))" + (item.duration.map { " / " + TimeSpan.format($0) } ?? "")
    }
    if let at = item.eligibleAt { text += "  at \(localTimeText(at, withSeconds: true))" }
    if let tag = item.tag { text += "  tag=\(tag)" }
    if let session = item.session { text += "  [\(session)]" }
    if item.ducked == true { text += "  ducked" }
    return text
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
