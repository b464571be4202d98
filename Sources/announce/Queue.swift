import AnnounceKit
import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `queue` and `status` show the same state: `queue` lists every item,
/// `status` summarises.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue", abstract: "What is playing, queued and scheduled.")

    @Flag(help: #"The daemon's state as one JSON object ({"running":false,"paused":false} when no daemon runs)."#)
    var json = false

    func run() throws { try showStatus(json: json, listItems: true) }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "The daemon's device, what plays, and how many items wait.")

    @Flag(help: #"The daemon's state as one JSON object ({"running":false,"paused":false} when no daemon runs)."#)
    var json = false

    func run() throws { try showStatus(json: json, listItems: false) }
}

private func showStatus(json: Bool, listItems: Bool) throws {
    _ = CLILogHandler.bootstrap(quiet: false)
    do {
        let runtime = try RuntimeDirectory.prepare()
        guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime) else {
            // The pause outlives the daemon: the next one starts paused.
            let since = runtime.pausedSince
            if json { return print(jsonLine(NoDaemon(paused: since != nil, pausedSince: since))) }
            print("no daemon running; " + (since.map { "the queue is paused (since \(localTimeText($0))); announce resume lets it go on" } ?? "nothing is queued"))
            return
        }
        guard let status = try client.call(Request(.status)).status else { throw AnnounceError.internal("status reply without status") }
        if json { return print(jsonLine(status)) }
        let paused = status.paused ? ", paused" + (status.pausedSince.map { " (since \(localTimeText($0)))" } ?? "") : ""
        print("daemon pid \(status.pid), device '\(status.device)' (\(status.deviceOpen ? "open" : "closed"))\(paused)\(status.quiet ? ", quiet" : "")")
        if let playing = status.playing { print(line(playing)) } else { print("nothing playing") }
        if let holds = status.holds { print("the queue waits: \(holds.joined(separator: "; "))") }
        let mixing = status.mixing ?? []
        if listItems {
            for item in mixing { print(line(item, mixing: true)) }
            for item in status.queued + status.scheduled { print(line(item)) }
        } else {
            let mixed = mixing.isEmpty ? "" : ", \(mixing.count) mixing"
            print("\(status.queued.count) queued, \(status.scheduled.count) scheduled\(mixed)")
        }
    } catch let error as AnnounceError {
        throw reportedExit(error)
    }
}

/// `status --json` when no daemon runs.
private struct NoDaemon: Encodable {
    var running = false
    var paused: Bool
    var pausedSince: Double?
}

private func line(_ item: ItemStatus, mixing: Bool = false) -> String {
    let state = mixing ? "mixing" + (item.state == .playing ? "" : " (\(item.state.rawValue))") : item.state.rawValue
    var text = "\(state.padding(12)) \(item.id)  \(item.priority.rawValue.padding(8)) \(item.path)"
    if let heard = item.heard { text += "  \(TimeSpan.format(heard))" + (item.duration.map { " / " + TimeSpan.format($0) } ?? "") }
    if let at = item.eligibleAt { text += "  at \(localTimeText(at, withSeconds: true))" }
    if let tag = item.tag { text += "  tag=\(tag)" }
    if let session = item.session { text += "  [\(session)]" }
    if item.ducked == true { text += "  ducked" }
    return text
}


extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
