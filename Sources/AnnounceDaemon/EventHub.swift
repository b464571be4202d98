import AnnounceModel

/// Who listens to what: the clients, the items each waits for, who shows their progress and
/// who subscribed to every event. It sends; it decides nothing about items.
final class EventHub {
    private(set) var connections: [Int32: Connection] = [:]
    /// Finished events held until the per-item device they played on is closed, so a waiting
    /// client finds that device's output complete.
    private var held: [DeviceName: [Event]] = [:]

    var isEmpty: Bool { connections.isEmpty }

    /// Who owns each live item that has an owner (the system queue's, or the system queue's
    /// items on its listener's daemon), so that each client sees of an event what it may
    /// (`Connection.view(of:)`). Forgotten with the item's `finished`.
    var owners: [ItemID: ItemOwner] = [:]

    /// `event` with its item's owner, when it has one and the event names none.
    private func withOwner(_ event: Event) -> Event {
        guard event.owner == nil, !owners.isEmpty, let id = event.id else { return event }
        return event.owned(by: owners[id])
    }

    func add(_ connection: Connection) { connections[connection.fd] = connection }

    /// Forgets clients that went away.
    /// Forgets clients that went away; returns the callers among them (the system queue's).
    @discardableResult
    func reap() -> [Caller] {
        var left: [Caller] = []
        for (fd, connection) in connections where connection.dead {
            if let caller = connection.caller { left.append(caller) }
            connections[fd] = nil
        }
        return left
    }

    /// Sends what is still buffered and forgets every client (the daemon is stopping).
    func closeAll() {
        for connection in connections.values { connection.flush() }
        connections.removeAll()
    }

    /// To every `events` subscriber, and to the clients waiting on the event's item.
    func emit(_ event: Event) {
        let event = withOwner(event)
        if event.event == .finished, let id = event.id { owners[id] = nil }
        let line = WireProtocol.encode(event)
        var privateLine: [UInt8]?
        for connection in connections.values {
            let waits = event.id.map { connection.waiting.contains($0) } ?? false
            guard connection.subscribed || (waits && event.event != .queued) else { continue }
            if connection.caller == nil || connection.view(of: event) == Event.Wire(event) {
                connection.send(line)
            } else {
                if privateLine == nil { privateLine = WireProtocol.encode(event.privateView()) }
                connection.send(privateLine!)
            }
            if waits && event.event == .finished { connection.waiting.remove(event.id!) }
        }
    }

    /// Emits `event` once `device` is closed.
    func emit(_ event: Event, whenClosed device: DeviceName) {
        held[device, default: []].append(event)
    }

    /// `device` is closed, or stays open for the next item: what waited for it goes out.
    func release(_ device: DeviceName) {
        for event in held.removeValue(forKey: device) ?? [] { emit(event) }
    }

    /// Some finished event waits for its device to close.
    var isHolding: Bool { !held.isEmpty }

    /// The items whose finished events are held.
    var heldIDs: [ItemID] { held.values.flatMap { $0.compactMap(\.id) } }

    /// A client shows this item's progress. (An `events` listener's 25/50/75% marks need no more
    /// than the unwatched reports: eight per clip at least.)
    func isProgressWatched(_ id: ItemID) -> Bool { connections.values.contains { $0.showsProgress(of: id) } }

    /// A progress tick to the clients showing `id`'s progress, and a quarter mark (`milestone`
    /// 25, 50 or 75; 0 for none) to every subscriber. `event` (with its percent, nil for a tick) is
    /// built only when someone listens.
    func publishProgress(of id: ItemID, milestone: Int, _ event: (_ percent: Int?) -> Event) {
        let watchers = connections.values.filter { $0.showsProgress(of: id) }
        let subscribers = milestone > 0 ? connections.values.filter(\.subscribed) : []
        if watchers.isEmpty && subscribers.isEmpty { return }
        if !watchers.isEmpty {
            let event = withOwner(event(nil))
            let tick = WireProtocol.encode(event)
            for connection in watchers {
                connection.send(connection.caller == nil ? tick : WireProtocol.encode(connection.view(of: event)))
            }
        }
        if !subscribers.isEmpty {
            let event = withOwner(event(milestone))
            let line = WireProtocol.encode(event)
            for connection in subscribers {
                connection.send(connection.caller == nil ? line : WireProtocol.encode(connection.view(of: event)))
            }
        }
    }

    /// The clients showing progress that wait for something (for `waiting` events).
    var waitWatchers: [Connection] {
        connections.values.filter { $0.wantsProgress && !$0.waiting.isEmpty }
    }
}

extension Connection {
    /// A client waiting for `id` with its progress shown (`play` on a terminal, `wait --progress`).
    fileprivate func showsProgress(of id: ItemID) -> Bool { wantsProgress && waiting.contains(id) }
}
