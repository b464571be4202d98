/// `--notify-others` towards other applications (DESIGN §3, Other players): while announce's
/// non-mixable activity lasts, the MPRIS players that were playing when it began are paused;
/// when it ends, exactly those are resumed, unless someone else changed them in between.
/// Pure: the bus thread reports what it sees and carries out the effects.
public struct OtherPlayers: Sendable {
    public enum Effect: Equatable, Sendable {
        case pause([String])
        case resume([String])
    }

    /// Players (by unique bus name) that announce paused and that have stayed paused since.
    public private(set) var pausedByAnnounce: Set<String> = []
    /// Of those, the ones not yet seen Paused: what they say meanwhile predates the pause.
    private var pausePending: Set<String> = []
    public private(set) var active = false

    public init() {}

    /// Whether announce's non-mixable activity lasts: an item plays on the main lane (where
    /// only non-mixable sessions play), or items wait there for their turn while the queue is
    /// not paused. It ends when the main lane's last item is done, or when the user pauses the
    /// queue; a gap between two queued items is no end.
    public static func nonMixableActive(mainLanePlaying: Bool, queuePaused: Bool, mainLaneWaiting: Bool) -> Bool {
        mainLanePlaying || (!queuePaused && mainLaneWaiting)
    }

    /// The activity began: pause those playing now (`statuses`: each player's PlaybackStatus).
    public mutating func activate(statuses: [String: PlaybackStatus]) -> [Effect] {
        guard !active else { return [] }
        active = true
        let playing = statuses.filter { $0.value == .playing }.keys.sorted()
        pausedByAnnounce = Set(playing)
        pausePending = Set(playing)
        return playing.isEmpty ? [] : [.pause(playing)]
    }

    /// The activity ended: resume the players still in announce's keeping, unless the item that
    /// ended it said `--no-notify-others` (`notifyOthers` false): then they stay paused.
    public mutating func deactivate(notifyOthers: Bool = true) -> [Effect] {
        guard active else { return [] }
        active = false
        let resumed = pausedByAnnounce.sorted()
        pausedByAnnounce = []
        pausePending = []
        return resumed.isEmpty || !notifyOthers ? [] : [.resume(resumed)]
    }

    /// A player's PlaybackStatus changed; true when that took it out of announce's keeping.
    /// Anything but Paused once announce's pause took effect means someone else took it over
    /// (played or stopped it, even if they paused it again later). A Playing before its Paused
    /// is older than the pause: a player may report its state as it was until it acts on the
    /// Pause (mpv-mpris does, after answering it).
    @discardableResult
    public mutating func changed(_ player: String, to status: PlaybackStatus) -> Bool {
        switch status {
        case .paused:
            pausePending.remove(player)
            return false
        case .playing where pausePending.contains(player):
            return false
        default:
            pausePending.remove(player)
            return pausedByAnnounce.remove(player) != nil
        }
    }

    /// The player left the bus, or did not take the pause.
    public mutating func forget(_ player: String) {
        pausedByAnnounce.remove(player)
        pausePending.remove(player)
    }

    /// A daemon killed (SIGKILL) while it kept players paused left their journal; of those, the
    /// ones still on the bus as the same connection (`owners`: each well-known name's unique one
    /// now) and still Paused are announce's again. Any other status, or another connection (the
    /// player restarted), means their user took them over.
    public static func adoptable(
        _ journal: PausedPlayersJournal, owners: [String: String],
        statuses: [String: PlaybackStatus]
    ) -> [String] {
        journal.players.filter { owners[$0.name] == $0.unique && statuses[$0.unique] == .paused }.map(\.unique).sorted()
    }

    /// Takes back `players` (`adoptable`) at the daemon's start, once it knows whether its
    /// non-mixable activity lasts (`active`: the spool's items play on): then they are resumed at
    /// its end, with those it pauses now (`statuses`); else at once.
    public mutating func adopt(_ players: [String], active nowActive: Bool, statuses: [String: PlaybackStatus])
        -> [Effect]
    {
        guard nowActive else { return players.isEmpty ? [] : [.resume(players.sorted())] }
        let effects = activate(statuses: statuses.filter { !players.contains($0.key) })
        pausedByAnnounce.formUnion(players)
        return effects
    }
}

/// The players announce keeps paused (RUNTIME/paused-players), written before it pauses them and
/// whenever the set changes, removed once it is empty: a daemon killed meanwhile leaves it for the next.
public struct PausedPlayersJournal: Codable, Equatable, Sendable {
    public struct Player: Codable, Equatable, Sendable {
        /// The player's bus connection (`:1.42`): a player that restarted has another.
        public var unique: String
        /// Its well-known name (`org.mpris.MediaPlayer2.mpv`).
        public var name: String

        public init(unique: String, name: String) {
            self.unique = unique
            self.name = name
        }
    }

    public var v = 1
    public var players: [Player]

    public init(players: [Player]) { self.players = players }
}

/// MPRIS's PlaybackStatus, its words on the bus as raw values.
public enum PlaybackStatus: String, Sendable, Codable {
    case playing = "Playing"
    case paused = "Paused"
    case stopped = "Stopped"
}
