import AnnounceClient
import AnnounceModel
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Waits for the outcomes of every play this host took, on one connection to its daemon and
/// one thread (`announce-zwait`), and has the bridge answer each play once all its items are
/// final. Each play's `wait` request goes on that connection as the play is queued; the
/// daemon answers them in order (which ids it knows), then sends each item's `finished`
/// event, also for one that ended before it was asked (from its outcome record).
final class ZoneWaiter: @unchecked Sendable {
    private struct Pending {
        let request: PlayID
        let ids: [ItemID]
        let answered: Bool
        var outcomes: [ItemID: Outcome] = [:]
    }

    private struct State {
        var client: DaemonClient?
        /// Plays whose `wait` has no reply yet, in the order sent.
        var unreplied: [Pending] = []
        /// Plays waiting for outcomes, by request.
        var waiting: [PlayID: Pending] = [:]
        /// Which play each awaited item belongs to.
        var requestOf: [ItemID: PlayID] = [:]
    }

    private let state = Mutex(State())
    weak var bridge: ZoneBridge?
    private let runtime: RuntimeDirectory

    init(runtime: RuntimeDirectory) { self.runtime = runtime }

    /// Plays waited for now (counted against `ZoneBridge.maxWaiting`).
    var count: Int { state.withLock { $0.unreplied.count + $0.waiting.count } }

    /// Waits for `ids`' outcomes, then answers `request` (when `answered`) and notes it answered.
    func wait(for request: PlayID, ids: [ItemID], answered: Bool) throws(AnnounceError) {
        let pending = Pending(request: request, ids: ids, answered: answered)
        let result: Result<Bool, AnnounceError> = state.withLock { state in
            do throws(AnnounceError) {
                let fresh = state.client == nil
                if fresh {
                    guard let client = try DaemonClient.connect(autoStart: false, runtime: runtime) else {
                        throw .unavailable("the daemon does not answer at \(runtime.socketPath)")
                    }
                    state.client = client
                }
                // Sent under the lock: the replies come in the order `unreplied` keeps.
                try state.client!.send(.wait(ids: ids, progress: false))
                state.unreplied.append(pending)
                return .success(fresh)
            } catch {
                return .failure(error)
            }
        }
        if try result.get(), let client = state.withLock({ $0.client }) {
            let handoff = Handoff(client)
            pthread_detach(startThread(named: "announce-zwait") { [self] in run(handoff.client) })
        }
    }

    /// Reads the connection until the daemon closes it (it is stopping: the plays stay recorded
    /// as unanswered, and the next bridge waits for them again).
    private func run(_ client: DaemonClient) {
        do {
            while let message = try client.next(watching: false) {
                switch message {
                case .reply(let reply): replied(reply)
                case .event(let event) where event.event == .finished:
                    if let id = event.id, let outcome = event.outcome { finished(id, outcome) }
                default: break
                }
            }
        } catch {
            bridge?.logger.warning("zones: lost the outcomes of \(count) play(s): \(error.description)")
        }
        // Their records stay unanswered: the next bridge waits for them again.
        state.withLock { $0 = State() }
    }

    /// The reply to the oldest `wait`: the ids the daemon does not know never finish, nor do any
    /// of a refused wait.
    private func replied(_ reply: Reply) {
        let done: Pending? = state.withLock { state in
            guard !state.unreplied.isEmpty else { return nil }
            var pending = state.unreplied.removeFirst()
            let refused: Outcome? =
                if case .failure(let error) = reply { Outcome(.failed, reason: error.message, code: error.code) } else {
                    nil
                }
            for id in refused == nil ? reply.unknown ?? [] : pending.ids
            where pending.ids.contains(id) && pending.outcomes[id] == nil {
                pending.outcomes[id] =
                    refused
                    ?? Outcome(
                        .failed, reason: "the daemon lost track of item \(id)", code: AnnounceError.internalExitCode)
            }
            if pending.outcomes.count == pending.ids.count { return pending }
            state.waiting[pending.request] = pending
            for id in pending.ids where pending.outcomes[id] == nil { state.requestOf[id] = pending.request }
            return nil
        }
        if let done { answer(done) }
    }

    /// One item's outcome; its play is answered once all of its items have one.
    private func finished(_ id: ItemID, _ outcome: Outcome) {
        let done: Pending? = state.withLock { state in
            // A `finished` may come before its `wait`'s reply is read: it waits in the order.
            if let request = state.requestOf.removeValue(forKey: id), var pending = state.waiting[request] {
                pending.outcomes[id] = outcome
                guard pending.outcomes.count == pending.ids.count else {
                    state.waiting[request] = pending
                    return nil
                }
                state.waiting[request] = nil
                return pending
            }
            if let index = state.unreplied.firstIndex(where: { $0.ids.contains(id) }) {
                state.unreplied[index].outcomes[id] = outcome
            }
            return nil
        }
        if let done { answer(done) }
    }

    private func answer(_ pending: Pending) {
        guard let bridge else { return }
        if pending.answered { bridge.answer(pending.request, pending.ids.map { pending.outcomes[$0] ?? Outcome.none }) }
        bridge.seen.record(pending.request, ids: pending.ids, answered: true)
    }
}
