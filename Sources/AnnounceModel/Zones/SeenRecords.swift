/// Which records of plays seen a host forgets (`RUNTIME/zones/seen/`, docs/ZONES.md): those that
/// expired, and, beyond `limit`, those that expire soonest until a tenth of the room is free
/// again; never a play still waiting for its outcome (a restarted daemon answers it from there).
public enum SeenRecords {
    public struct Entry: Equatable, Sendable {
        public var name: PlayID
        public var expires: Double
        /// Queued here and not answered yet.
        public var pending: Bool

        public init(name: PlayID, expires: Double, pending: Bool) {
            self.name = name
            self.expires = expires
            self.pending = pending
        }
    }

    /// The names to forget of `entries` at `now`.
    public static func toForget(_ entries: [Entry], now: Double, limit: Int = ZoneLimits.maxSeenRecords) -> [PlayID] {
        let expired = entries.filter { $0.expires < now }
        let kept = entries.filter { $0.expires >= now }
        guard kept.count > limit else { return expired.map(\.name) }
        let excess = kept.count - limit * 9 / 10
        let soonest = kept.filter { !$0.pending }.sorted { ($0.expires, $0.name) < ($1.expires, $1.name) }.prefix(
            excess)
        return expired.map(\.name) + soonest.map(\.name)
    }
}
