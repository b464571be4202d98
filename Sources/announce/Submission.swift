import AnnounceClient
import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import ArgumentParser
import Logging

/// `--device`, for `play` and `say`.
struct DeviceFlags: ParsableArguments {
    @Option(
        long: "device", short: "d",
        help: """
            ALSA PCM to play on (see `announce devices`); default: the daemon's. With --category multi-route, \
            give it up to \(Limits.maxDevices) times to play on every one at once.
            """, completion: deviceCompletion)
    var device: [DeviceName] = []
}

/// What `play` and `say` print and whether they wait.
struct DeliveryFlags: ParsableArguments {
    @Flag(long: "no-wait", help: "Print the item ids once they are safely queued, and exit 0.")
    var noWait = false

    @Flag(long: "json", help: "Print each outcome (or, with --no-wait, the ids) as a JSON object.")
    var json = false

    @Flag(
        long: "quiet", short: "q",
        help:
            "Errors only: no progress display, no ids with --no-wait, no warnings but that the queue is paused, no reason line for exit 75 (what --json asks for is still printed)."
    )
    var quiet = false
}

/// What became of a play request, for whoever stored media for it (`play -`): deleted unless
/// the daemon may hold it.
enum Handover {
    /// Never sent, or refused: nothing refers to its media.
    case refused
    /// The connection failed while asking: the daemon may have spooled it.
    case unknown
    /// Acknowledged: the queue owns its media.
    case accepted
}

/// Queues the requests `make` builds (each checked first, so a request the daemon would refuse
/// never starts one) and, unless --no-wait, waits for their outcomes: `play`'s and `say`'s
/// common path. `names` are what the progress line calls the items, `paths` the messages.
/// `handover` learns whether the daemon took them, before any wait. For the system queue
/// (DESIGN §8) `make` gets the files to hand over, where it adds each item's audio; the chimes
/// are added here.
func submit(
    names: [String], paths: [String], command: some QueuingCommand, handover: (Handover) -> Void = { _ in },
    make: (FileHandover?) throws(AnnounceError) -> [ItemRequest]
) throws {
    let (delivery, session, zones) = (command.delivery, command.session, command.zones)
    let logger = CLILogHandler.bootstrap(quiet: delivery.quiet)
    var display: ProgressLine?
    do {
        for warning in session.warnings() { logger.warning("\(warning)") }
        let system = try RuntimeDirectory.clientTarget().isSystem
        let files = !zones.isOn && system ? FileHandover() : nil
        var requests = try make(files)
        if let files { try files.addChimes(&requests) }
        if let problem = PlayRequest(items: requests).problem { throw AnnounceError.usage(problem) }
        if zones.isOn {
            let status = try submitToZones(requests, zones: zones, delivery: delivery, logger: logger)
            if status != 0 { throw ExitCode(status) }
            return
        }
        guard var client = try DaemonClient.connect(autoStart: true) else { return }
        display =
            !delivery.noWait && !delivery.json && !delivery.quiet ? ProgressLine.forTerminal() : nil
        let reply: Reply
        do {
            reply = try DaemonClient.play(
                PlayRequest(items: requests, wait: !delivery.noWait, progress: display != nil),
                descriptors: files?.descriptors ?? [], on: &client)
        } catch {
            if case .daemon = error { handover(.refused) } else { handover(.unknown) }
            throw error
        }
        handover(.accepted)
        let ids = reply.ids ?? []
        if delivery.noWait {
            delivery.json
                ? print(jsonLine(Versioned(QueuedReply(ids: ids, pausedSince: reply.pausedSince))))
                : output(ids.map(\.rawValue).joined(separator: "\n"))
            return
        }
        // A paused queue is never a silent hang: without the progress line the warning is
        // printed even with -q (it is why nothing happens), and --json prints a `waiting` event.
        if let since = reply.pausedSince {
            if delivery.json {
                for (id, request) in zip(ids, requests) {
                    let item = EventItem(id, path: request.clip.path, priority: request.priority)
                    print(jsonLine(Event(time: since, .waiting(item, reason: .paused))))
                }
            }
            if display == nil {
                printError(
                    "warning: the queue is paused (since \(localTimeText(since))): waiting for `announce resume`")
            }
        }
        client.cancelOnInterrupt(ids: ids)
        let follower = display.map { ProgressFollower($0, ids: ids, names: names) }
        let outcomes = try OutcomeWaiter.wait(for: ids, on: client, progress: display != nil) { follower?.handle($0) }
        let status = reportOutcomes(
            outcomes, of: zip(ids, paths).map { (id: $0, path: $1) }, json: delivery.json,
            quiet: delivery.quiet, shown: display != nil, logger: logger)
        if status != 0 { throw ExitCode(status) }
    } catch let error as AnnounceError {
        display?.endLine()  // the error goes on a line of its own
        throw reportedExit(error)
    }
}

/// `play --no-wait --json`: the ids, and when the queue is paused, since when.
private struct QueuedReply: Encodable {
    var ids: [ItemID]
    var pausedSince: Double?
}

/// `--device NAME`: any name; what a request may name is `DeviceName`'s rule, checked in `validate()`.
extension DeviceName: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument) }
}
