/// `announce cancel 3f9c` names the one live item whose id begins `3f9c`, as git takes a
/// unique prefix of a commit id. The one rule for what an id given by a user means.
public enum ItemIDPrefix {
    public enum Resolution: Sendable {
        /// An id to send as it is: a live id, or one that matches none (the daemon then says
        /// unknown or already final).
        case id(ItemID)
        /// Several live ids begin with it.
        case ambiguous([ItemID])
    }

    /// What `given` names among the ids of the items still live (queued, scheduled, playing, mixing).
    public static func resolve(_ given: String, among live: [ItemID]) -> Resolution {
        if live.contains(ItemID(given)) { return .id(ItemID(given)) }
        let matches = Array(Set(live.filter { $0.rawValue.hasPrefix(given) })).sorted()
        switch matches.count {
        case 0: return .id(ItemID(given))
        case 1: return .id(matches[0])
        default: return .ambiguous(matches)
        }
    }
}
