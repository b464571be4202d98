import FoundationEssentials

/// A play for other hosts, one MQTT message (docs/ZONES.md, Payloads): the items as a `play`
/// request carries them, with the audio of a file in the message (`RemoteItem.audio`, at most
/// `ZoneLimits.maxAudioBytes` in all). The same `id` twice is the same play (QoS 1 may deliver
/// it again; a host plays it once).
public struct RemotePlay: Codable, Equatable, Sendable {
    public var v: Int
    public var id: PlayID
    /// The sending host's name (for the log, and the items' labels).
    public var from: String
    /// When it was sent (seconds since the epoch, the sender's clock).
    public var sent: Double
    public var items: [RemoteItem]

    public init(id: PlayID, from: String, sent: Double, items: [RemoteItem]) {
        self.v = WireProtocol.version
        self.id = id
        self.from = from
        self.sent = sent
        self.items = items
    }

    /// The message's expiry for the broker: the shortest `expire` of its items, counted from
    /// their becoming due (`at`/`delay` added); nil when one never expires.
    public var expiry: Double? {
        var longest = 0.0
        for entry in items {
            guard let expire = entry.item.expire else { return nil }
            let due = entry.item.at.map { max(0, $0 - sent) } ?? entry.item.delay ?? 0
            longest = max(longest, due + expire)
        }
        return items.isEmpty ? nil : longest
    }

    /// Every host of a play starts it together: each queued item given neither `at` nor `delay`
    /// is due at `sent + lead` (`ZoneLimits.startLead`), a time of day every host's scheduler
    /// keeps on its own (NTP-synced) clock. A mixing session starts at once and takes no `at`.
    public mutating func startTogether(lead: Double = ZoneLimits.startLead) {
        for index in items.indices {
            let item = items[index].item
            guard item.at == nil, item.delay == nil, (item.session ?? .default).lane == .main else { continue }
            items[index].item.at = sent + lead
        }
    }

    /// How long it waited at the broker, from what the broker says is left of its expiry
    /// (`expiryLeft`, whole seconds on the broker's clock; nil: it has none): 0 to its expiry.
    public func waitedAtBroker(expiryLeft: Double?) -> Double {
        guard let left = expiryLeft, let expiry, left.isFinite, expiry.isFinite else { return 0 }
        return min(max(0, expiry.rounded(.up) - left), expiry, Limits.latestTime)
    }

    /// The play as it is `waited` seconds after it was sent (the time it waited at the broker:
    /// MQTT 5 says what is left of its expiry). An item not yet due keeps its `at` (a time of
    /// day, which every host keeps on its own clock) or has its `delay` shortened; one that
    /// became due meanwhile is due now, with what is left of its `expire` (at least 0: it
    /// expires at once), so that no host counts its expiry from its own, later, arrival.
    public mutating func age(by waited: Double) {
        guard waited > 0 else { return }
        for index in items.indices {
            var item = items[index].item
            let due = item.at.map { max(0, $0 - sent) } ?? item.delay ?? 0
            if waited < due {
                if item.at == nil, item.delay != nil { item.delay = due - waited }
            } else {
                if item.at != nil { item.at = nil }
                if item.delay != nil { item.delay = 0 }
                if let expire = item.expire { item.expire = max(0, expire - (waited - due)) }
            }
            items[index].item = item
        }
    }
}

/// One item of a `RemotePlay`: what to play and how, and the file's bytes when it travels in
/// the message (base64 in JSON). Without `audio`, the clip is speech (`say`), a URL the host
/// downloads, or a live stream.
public struct RemoteItem: Codable, Equatable, Sendable {
    public var item: ItemRequest
    public var audio: Data?
    /// The bytes of its `--chime` and `--chime-after` sounds: a host plays them, never a path.
    public var chime: Data?
    public var chimeAfter: Data?

    public init(item: ItemRequest, audio: Data? = nil, chime: Data? = nil, chimeAfter: Data? = nil) {
        self.item = item
        self.audio = audio
        self.chime = chime
        self.chimeAfter = chimeAfter
    }

    /// Every sound it carries, in bytes.
    public var audioBytes: Int { (audio?.count ?? 0) + (chime?.count ?? 0) + (chimeAfter?.count ?? 0) }

    /// An item with a file's bytes in the message (nil: a URL, speech or a stream), and its chimes'.
    public init(item: ItemRequest, bytes: [UInt8]?, chime: [UInt8]? = nil, chimeAfter: [UInt8]? = nil) {
        self.init(
            item: item, audio: bytes.map { Data($0) }, chime: chime.map { Data($0) },
            chimeAfter: chimeAfter.map { Data($0) })
    }
}

/// The cancel of a play its sender no longer wants (Ctrl-C), on the cancel topics of the
/// play's targets: each host cancels the play's items, and one that has not seen the play yet
/// never plays it.
public struct RemoteCancel: Codable, Equatable, Sendable {
    public var v: Int
    public var id: PlayID
    public var from: String

    public init(id: PlayID, from: String) {
        self.v = WireProtocol.version
        self.id = id
        self.from = from
    }

    /// The cancel a message holds, or nil (it is logged and dropped).
    public static func decode(_ payload: [UInt8]) -> RemoteCancel? {
        guard payload.count <= 4096, let cancel = try? JSONCoding.decode(RemoteCancel.self, from: payload),
            cancel.v == WireProtocol.version, cancel.id.isWellFormed,
            ZoneName.problem(cancel.from, kind: "host") == nil
        else { return nil }
        return cancel
    }
}

/// A host's outcome of one `RemotePlay`, on `announce/v1/result/ID/HOST`: the items' outcomes
/// in order (a refused play: one `failed` outcome with the reason and code 64).
public struct RemoteResult: Codable, Equatable, Sendable {
    public var v: Int
    public var id: PlayID
    public var host: String
    public var outcomes: [Outcome]
    public var time: Double

    public init(id: PlayID, host: String, outcomes: [Outcome], time: Double) {
        self.v = WireProtocol.version
        self.id = id
        self.host = host
        self.outcomes = outcomes
        self.time = time
    }

    /// The first outcome that did not play, else the first: what the host's line says.
    public var summary: Outcome {
        outcomes.first { $0.kind != .played } ?? outcomes.first ?? Outcome.none
    }
}

/// A host's state, retained on `announce/v1/status/HOST`: what `announce hosts` lists, and how
/// a sender learns which hosts a zone has. The broker publishes the `offline` one as the last
/// will when the host's connection is lost.
public struct HostStatus: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable { case online, offline }

    public var v: Int
    public var host: String
    public var zones: [String]
    public var state: State
    /// The playing item's label (`path`), when one plays.
    public var playing: String?
    /// Items waiting (queued and scheduled), not counting the playing one.
    public var queued: Int?
    public var quiet: Bool?
    public var paused: Bool?
    /// When it was said; absent from the `offline` one (the last will is written at connection).
    public var time: Double?
    /// `offline` said by a daemon that stopped, as a goodbye; absent from the last will, which
    /// the broker publishes when it lost the host (it may be reconnecting).
    public var stopped: Bool?

    public init(
        host: String, zones: [String], state: State, playing: String? = nil, queued: Int? = nil,
        quiet: Bool? = nil, paused: Bool? = nil, time: Double? = nil, stopped: Bool? = nil
    ) {
        self.v = WireProtocol.version
        self.host = host
        self.zones = zones
        self.state = state
        self.playing = playing
        self.queued = queued
        self.quiet = quiet
        self.paused = paused
        self.time = time
        self.stopped = stopped
    }

    /// Offline because its daemon stopped, not because the broker lost it: not coming back soon.
    public var hasStopped: Bool { state == .offline && stopped == true }

    /// The same state, whatever the time: a status is published again only when this changes.
    public func sameState(as other: HostStatus) -> Bool {
        var other = other
        other.time = time
        return other == self
    }
}

public enum ZoneLimits {
    /// Most bytes of audio one play message carries (files, in all); a larger file goes as a
    /// URL the hosts download.
    public static let maxAudioBytes = 1 << 20
    /// Larger messages are dropped unread: the audio in base64 and the items' JSON fit below it.
    public static let maxMessageBytes = maxAudioBytes * 3 / 2 + WireProtocol.maxLineBytes
    /// A play id is remembered this long when its items never expire (QoS 1 redelivery comes
    /// within a session's life; a week covers a host away that long).
    public static let seenRetention = 7 * 86400.0
    /// A refused play's id is remembered this long (its refusal is not sent twice for a
    /// redelivery); after that a copy is refused, and answered, again.
    public static let refusedRetention = 3600.0
    /// Most play records a host keeps (`SeenRecords`): a flood of ids does not fill its disk.
    public static let maxSeenRecords = 10_000
    /// How long after it is sent a zone's hosts start a play together: the time it takes to
    /// reach them and for each to open its device (measured on loopback: docs/ZONES.md).
    public static let startLead = 0.3
    /// How long the broker keeps a host's session (its subscriptions and queued plays) while it is away.
    public static let sessionExpiry: UInt32 = 7 * 86400
}
