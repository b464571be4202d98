import AnnounceModel

/// announce as an MPRIS player (the MPRIS 2.2 spec's org.mpris.MediaPlayer2 and its Player
/// interface) at `/org/mpris/MediaPlayer2`: answers property reads from the `NowPlaying` the
/// control thread last gave, signals PropertiesChanged when it changes, and hands the queue's
/// controls (Play, Pause, PlayPause, Next, Stop) to `onControl`.
final class MPRISPlayer {
    static let busName = "org.mpris.MediaPlayer2.announce"
    static let path = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    private static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    private let bus: Bus
    private let onControl: (PlayerControl) -> Void
    private(set) var nowPlaying = NowPlaying.stopped

    init(bus: Bus, onControl: @escaping (PlayerControl) -> Void) throws(AnnounceError) {
        self.bus = bus
        self.onControl = onControl
        try bus.addObject(Self.path) { [unowned self] message in self.answer(message) }
        try bus.requestName(Self.busName)
    }

    /// Takes the queue's new state and tells the bus what changed of the Player's properties.
    func show(_ now: NowPlaying) {
        guard now != nowPlaying else { return }
        let before = Dictionary(uniqueKeysWithValues: playerProperties)
        nowPlaying = now
        // Position is polled by clients, never signalled (the spec says so).
        let changed = playerProperties.filter { $0.0 != "Position" && before[$0.0] != $0.1 }
        guard !changed.isEmpty,
            let signal = try? bus.signal(
                path: Self.path, interface: Self.propertiesInterface,
                member: "PropertiesChanged")
        else { return }
        do {
            try signal.append(.string(Self.playerInterface))
            try signal.append(.dictionary(changed))
            try signal.append(.strings([]))
            try bus.send(signal)
        } catch {}
    }

    private var rootProperties: [(String, BusValue)] {
        [
            ("CanQuit", .bool(false)), ("CanRaise", .bool(false)), ("HasTrackList", .bool(false)),
            ("Identity", .string("announce")), ("SupportedUriSchemes", .strings([])),
            ("SupportedMimeTypes", .strings([]))
        ]
    }

    private var playerProperties: [(String, BusValue)] {
        // CanPlay and CanPause mean "there is a track" (playerctl reads CanPlay so for stop and metadata).
        let hasTrack = nowPlaying.id != nil
        return [
            ("PlaybackStatus", .string(nowPlaying.status.rawValue)), ("Metadata", .dictionary(metadata)),
            ("Rate", .double(1)), ("MinimumRate", .double(1)), ("MaximumRate", .double(1)), ("Volume", .double(1)),
            ("Position", .int64(Int64((nowPlaying.position ?? 0) * 1_000_000))),
            ("CanGoNext", .bool(hasTrack)), ("CanGoPrevious", .bool(false)), ("CanPlay", .bool(hasTrack)),
            ("CanPause", .bool(hasTrack)), ("CanSeek", .bool(false)), ("CanControl", .bool(true))
        ]
    }

    private var metadata: [(String, BusValue)] {
        guard let id = nowPlaying.id else { return [("mpris:trackid", .objectPath(Self.noTrack))] }
        var entries: [(String, BusValue)] = [("mpris:trackid", .objectPath(Self.trackPath(id)))]
        if let title = nowPlaying.title { entries.append(("xesam:title", .string(title))) }
        if let duration = nowPlaying.duration { entries.append(("mpris:length", .int64(Int64(duration * 1_000_000)))) }
        return entries
    }

    /// An object path element takes only [A-Za-z0-9_]: anything else of an id becomes `_XX`.
    static func trackPath(_ id: ItemID) -> String {
        let element = id.rawValue.utf8.map { byte -> String in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                String(UnicodeScalar(byte))
            default: "_" + String(byte, radix: 16, uppercase: true)
            }
        }.joined()
        return "/org/announce/item/i\(element)"
    }

    private func properties(of interface: String) -> [(String, BusValue)]? {
        switch interface {
        case Self.rootInterface: rootProperties
        case Self.playerInterface: playerProperties
        default: nil
        }
    }

    /// One call to our object; false leaves it to sd-bus (which answers unknown ones).
    private func answer(_ call: BusMessage) -> Bool {
        guard call.isMethodCall, let member = call.member else { return false }
        do {
            switch (call.interface, member) {
            case (Self.propertiesInterface, "Get"):
                let interface = try call.readString()
                let name = try call.readString()
                guard let value = properties(of: interface)?.first(where: { $0.0 == name })?.1 else {
                    bus.replyError(
                        to: call, name: "org.freedesktop.DBus.Error.UnknownProperty", text: "no property \(name)")
                    return true
                }
                let reply = try bus.reply(to: call)
                try reply.appendVariant(value)
                try bus.send(reply)
            case (Self.propertiesInterface, "GetAll"):
                let reply = try bus.reply(to: call)
                try reply.append(.dictionary(properties(of: try call.readString()) ?? []))
                try bus.send(reply)
            case (Self.propertiesInterface, "Set"):
                bus.replyError(
                    to: call, name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                    text: "announce's properties are read-only")
            case (Self.playerInterface, _) where PlayerControl(rawValue: member) != nil:
                onControl(PlayerControl(rawValue: member)!)
                try bus.send(try bus.reply(to: call))
            case (Self.playerInterface, "Previous"), (Self.playerInterface, "Seek"),
                (Self.playerInterface, "SetPosition"),
                (Self.rootInterface, "Raise"), (Self.rootInterface, "Quit"):
                // The spec's answer when CanGoPrevious, CanSeek, CanRaise or CanQuit is false: nothing happens.
                try bus.send(try bus.reply(to: call))
            case (Self.playerInterface, "OpenUri"):
                bus.replyError(
                    to: call, name: "org.freedesktop.DBus.Error.NotSupported", text: "announce opens no URIs over MPRIS"
                )
            default:
                return false
            }
        } catch {
            bus.replyError(to: call, name: "org.freedesktop.DBus.Error.InvalidArgs", text: error.description)
        }
        return true
    }
}
