import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The other MPRIS players on the session bus, for `--notify-others` towards them (DESIGN §3):
/// it watches their PlaybackStatus and owners, reads and pauses or resumes them, and leaves
/// every decision to the `OtherPlayers` model. It journals the players announce keeps paused
/// (`journalPath`), so that the next daemon resumes them when this one is killed.
final class OtherPlayersWatcher {
    private static let prefix = "org.mpris.MediaPlayer2."
    private let bus: Bus
    private var players = OtherPlayers()
    /// Each player's well-known name by its unique one, for the log and the journal.
    private var names: [String: String] = [:]
    private let log: (String) -> Void
    private let journalPath: String?
    /// A killed daemon's journal, taken back at the first `setActive`.
    private var journalled: PausedPlayersJournal?
    /// The players the journal on disk names.
    private var written: Set<String> = []

    init(bus: Bus, journalPath: String?, log: @escaping (String) -> Void) throws(AnnounceError) {
        self.bus = bus
        self.log = log
        self.journalPath = journalPath
        if let journalPath, let bytes = readWholeFile(journalPath) {
            if let journal = try? JSONCoding.decode(PausedPlayersJournal.self, from: bytes) {
                journalled = journal
                written = Set(journal.players.map(\.unique))
            } else {
                log("\(journalPath) is unreadable; removed")
                unlink(journalPath)
            }
        }
        try bus.addMatch(
            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                + "path='/org/mpris/MediaPlayer2',arg0='org.mpris.MediaPlayer2.Player'"
        ) { [unowned self] signal in
            if let sender = signal.sender, let status = try? Self.playbackStatus(inChange: signal) {
                if players.changed(sender, to: status) {
                    log("MPRIS player \(names[sender] ?? sender) is \(status.rawValue): its user took it over")
                }
                persist()
            }
            return false
        }
        try bus.addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                + "member='NameOwnerChanged',arg0namespace='org.mpris.MediaPlayer2'"
        ) { [unowned self] signal in
            if (try? signal.readString()) != nil, let old = try? signal.readString(),
                let new = try? signal.readString(),
                new.isEmpty, !old.isEmpty
            {
                players.forget(old)
                persist()
            }
            return false
        }
    }

    /// announce's non-mixable activity began (true) or ended (false); `notifyOthers`: the
    /// option of the main lane's last item.
    func setActive(_ active: Bool, notifyOthers: Bool) {
        let effects: [OtherPlayers.Effect]
        if let journal = journalled {
            journalled = nil
            effects = players.adopt(adoptable(journal), active: active, statuses: active ? currentStatuses() : [:])
        } else {
            guard active != players.active else { return }
            effects =
                active ? players.activate(statuses: currentStatuses()) : players.deactivate(notifyOthers: notifyOthers)
        }
        let what = effects.map { effect in
            switch effect {
            case .pause(let players): "pausing " + players.map { names[$0] ?? $0 }.joined(separator: ", ")
            case .resume(let players): "resuming " + players.map { names[$0] ?? $0 }.joined(separator: ", ")
            }
        }
        log(
            "announce's non-mixable activity \(active ? "began" : "ended"): \(what.isEmpty ? "no other player to pause or resume" : what.joined(separator: "; "))"
        )
        // The journal knows a player before it is paused, and forgets one after it is resumed.
        defer { persist() }
        for effect in effects {
            switch effect {
            case .pause(let names):
                persist()
                for name in names { send("Pause", to: name) }
            case .resume(let names):
                // Read once more: a change whose signal has not come yet still counts. One that
                // does not answer is asked to play anyway (Play on a playing player does nothing).
                for name in names where status(of: name).map({ $0 == .paused }) ?? true { send("Play", to: name) }
            }
        }
    }

    /// Of a killed daemon's players, those announce may take back (`OtherPlayers.adoptable`).
    private func adoptable(_ journal: PausedPlayersJournal) -> [String] {
        var owners: [String: String] = [:]
        var statuses: [String: PlaybackStatus] = [:]
        for player in journal.players {
            guard let owner = owner(of: player.name) else { continue }
            owners[player.name] = owner
            if owner == player.unique { statuses[owner] = status(of: owner) }
            names[owner] = player.name
        }
        let adopted = OtherPlayers.adoptable(journal, owners: owners, statuses: statuses)
        log(
            "MPRIS players a killed daemon had paused: \(journal.players.map(\.name)); still paused: \(adopted.map { names[$0] ?? $0 })"
        )
        return adopted
    }

    /// Writes the players announce keeps paused to the journal, or removes it when there are none.
    private func persist() {
        guard let journalPath, players.pausedByAnnounce != written else { return }
        written = players.pausedByAnnounce
        guard !written.isEmpty else {
            unlink(journalPath)
            return
        }
        let journal = PausedPlayersJournal(players: written.sorted().map { .init(unique: $0, name: names[$0] ?? $0) })
        do {
            try writeFileAtomically(JSONCoding.encode(journal, orElse: "{}"), to: journalPath)
        } catch {
            log("cannot write \(journalPath): \(error.description)")
        }
    }

    private func send(_ method: String, to player: String) {
        let name = names[player] ?? player
        do {
            _ = try bus.call(
                try bus.methodCall(
                    to: player, path: MPRISPlayer.path, interface: MPRISPlayer.playerInterface, member: method))
            log("\(method) sent to MPRIS player \(name)")
        } catch let error as BusCallError where error.timedOut {
            // It may still act on it: kept, so that a Pause it takes late is undone too.
            log("MPRIS player \(name) did not answer \(method) in time: \(error.description)")
        } catch {
            log("MPRIS player \(name) did not take \(method): \(error)")
            players.forget(player)
        }
    }

    /// Each other player's PlaybackStatus, by its unique name.
    private func currentStatuses() -> [String: PlaybackStatus] {
        var statuses: [String: PlaybackStatus] = [:]
        for name in playerNames() where name != MPRISPlayer.busName {
            guard let owner = owner(of: name), let status = status(of: owner) else { continue }
            statuses[owner] = status
            names[owner] = name
        }
        return statuses
    }

    private func playerNames() -> [String] {
        do {
            let reply = try bus.call(
                bus.methodCall(
                    to: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "ListNames"))
            var names: [String] = []
            try reply.enter("a", "s")
            while try reply.peek() != nil { names.append(try reply.readString()) }
            try reply.exit()
            return names.filter { $0.hasPrefix(Self.prefix) }
        } catch {
            log("cannot list the bus's names: \(error)")
            return []
        }
    }

    private func owner(of name: String) -> String? {
        guard
            let call = try? bus.methodCall(
                to: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "GetNameOwner"),
            (try? call.append(.string(name))) != nil
        else { return nil }
        return try? bus.call(call).readString()
    }

    private func status(of player: String) -> PlaybackStatus? {
        guard
            let call = try? bus.methodCall(
                to: player, path: MPRISPlayer.path, interface: MPRISPlayer.propertiesInterface, member: "Get"),
            (try? call.append(.string(MPRISPlayer.playerInterface))) != nil,
            (try? call.append(.string("PlaybackStatus"))) != nil,
            let reply = try? bus.call(call), let text = try? reply.readStringVariant()
        else { return nil }
        return PlaybackStatus(rawValue: text)
    }

    /// The PlaybackStatus a PropertiesChanged of the Player interface carries, if it does.
    private static func playbackStatus(inChange signal: BusMessage) throws(AnnounceError) -> PlaybackStatus? {
        _ = try signal.readString()
        return try signal.readStringDictionary()["PlaybackStatus"].flatMap { $0 }.flatMap(
            PlaybackStatus.init(rawValue:))
    }
}
