import AnnounceModel
import AnnounceSystem

/// Waits for items' final events. If the daemon goes away meanwhile (killed,
/// restarted), it reconnects, starting a daemon again, which restores the
/// queue from its spool, and goes on waiting for the same ids.
public enum OutcomeWaiter {
    /// Gives up after this many reconnections in a row without hearing anything.
    static let maxReconnects = 5

    public static func wait(
        for ids: [ItemID], on client: DaemonClient, progress: Bool,
        onEvent: (Event) -> Void
    ) throws(AnnounceError) -> [ItemID: Event] {
        var outcomes: [ItemID: Event] = [:]
        var client = client
        var reconnects = 0
        while outcomes.count < ids.count {
            guard let message = try client.next() else {
                reconnects += 1
                guard reconnects <= maxReconnects else {
                    throw .unavailable("the daemon keeps going away (see \(client.runtime.logPath))")
                }
                guard let fresh = try DaemonClient.connect(autoStart: true, runtime: client.runtime, reconnecting: true)
                else { continue }
                client = fresh
                let remaining = ids.filter { outcomes[$0] == nil }
                let reply: Reply
                do {
                    reply = try client.call(.wait(ids: remaining, progress: progress))
                } catch .unavailable {
                    continue  // a dying daemon's socket can still take a connection: count it, try again
                }
                for id in reply.unknown ?? [] {
                    let lost = Outcome(
                        .failed, reason: "the daemon lost track of item \(id)", code: AnnounceError.internalExitCode)
                    outcomes[id] = Event(time: 0, .finished(EventItem(id), outcome: lost))
                }
                continue
            }
            guard case .event(let event) = message, let id = event.id, ids.contains(id) else { continue }
            reconnects = 0
            onEvent(event)
            if event.event == .finished { outcomes[id] = event }
        }
        return outcomes
    }
}
