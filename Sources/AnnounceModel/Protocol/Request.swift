import FoundationEssentials

/// What a client asks of the daemon: one per line, `{"v":1,"op":OP,...}` (docs/protocol.md,
/// Requests). Decoded once, with the version checked, by `init(line:)`; only the fields of its
/// op are kept, each in its own type.
public enum Request: Equatable, Sendable {
    case play(PlayRequest)
    /// The system sound; with `wait`, its events follow until its `finished`.
    case alert(AlertRequest, wait: Bool)
    /// Stream these items' events; `progress` adds every progress tick.
    case wait(ids: [ItemID], progress: Bool)
    case status, skip, pause, resume, stop, clear
    case cancel(CancelTarget)
    /// Every event, until the client disconnects.
    case events
    case quiet(QuietRequest)

    /// `play` of these items.
    public static func play(items: [ItemRequest], wait: Bool = false, progress: Bool = false) -> Request {
        .play(PlayRequest(items: items, wait: wait, progress: progress))
    }

    public var operation: Operation {
        switch self {
        case .play: .play
        case .alert: .alert
        case .wait: .wait
        case .status: .status
        case .skip: .skip
        case .pause: .pause
        case .resume: .resume
        case .stop: .stop
        case .clear: .clear
        case .cancel: .cancel
        case .events: .events
        case .quiet: .quiet
        }
    }

    /// The request a line holds. A line that is no such request throws a usage error (64) whose
    /// message is the daemon's error reply: `malformed request: items[0].clip.path: expected String`,
    /// `unsupported protocol version 2; this daemon speaks 1`, `cancel needs ids or a tag`.
    public init(line: some Collection<UInt8>) throws(AnnounceError) {
        do {
            self = try JSONCoding.decode(Request.self, from: line)
        } catch let refusal as RequestRefusal {
            throw .usage(refusal.message)
        } catch let error as DecodingError {
            throw .usage("malformed request: \(WireProtocol.describe(error))")
        } catch {
            throw .usage("malformed request: not a JSON object")
        }
    }
}

/// The ops, as `op` spells them.
public enum Operation: String, Codable, Sendable {
    case play, alert, wait, status, skip, pause, resume, stop, clear, cancel, events, quiet
}

/// `play`: the clips, queued in this order with consecutive sequence numbers.
public struct PlayRequest: Equatable, Sendable {
    /// 1 to `Limits.maxItemsPerPlay`.
    public var items: [ItemRequest]
    /// Keep the connection and stream these items' events until their outcomes.
    public var wait: Bool
    /// Also stream progress events (a terminal's progress line).
    public var progress: Bool
    /// The client's name for this request, the same when it sends it again: a daemon restarted
    /// after it spooled the request but before it answered finds its items by it (DESIGN §5).
    public var key: String?

    public init(items: [ItemRequest], wait: Bool = false, progress: Bool = false, key: String? = nil) {
        self.items = items
        self.wait = wait
        self.progress = progress
        self.key = key
    }
}

/// `cancel`: what to end. `tag` wins when a line has both.
public enum CancelTarget: Equatable, Sendable {
    case ids([ItemID])
    case tag(String)
}

/// `quiet`: the position of the switch (`state`, and `until` with `until`).
public enum QuietRequest: Equatable, Sendable {
    case on, off
    /// Quiet until this time (seconds since the epoch).
    case until(Double)
}

/// A line that decodes but is no request of its op (no `items`, a cancel of nothing): the
/// message is the whole error reply, without `malformed request:`.
struct RequestRefusal: Error {
    var message: String
}

extension Request: Codable {
    private enum Key: String, CodingKey {
        case v, op, items, wait, progress, key, ids, tag, state, until, alert
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard let version = try container.decodeIfPresent(Int.self, forKey: .v) else {
            throw RequestRefusal(message: "malformed request: no protocol version \"v\"")
        }
        guard version == WireProtocol.version else {
            throw RequestRefusal(
                message: "unsupported protocol version \(version); this daemon speaks \(WireProtocol.version)")
        }
        let operation = try container.decode(Operation.self, forKey: .op)
        // Each field has one type whatever the op: a field of the wrong type is refused even
        // where its op does not take it, in this order (as version 1 always has).
        let items = try container.decodeIfPresent([ItemRequest].self, forKey: .items)
        let wait = try container.decodeIfPresent(Bool.self, forKey: .wait) ?? false
        let progress = try container.decodeIfPresent(Bool.self, forKey: .progress) ?? false
        let key = try container.decodeIfPresent(String.self, forKey: .key)
        let ids = try container.decodeIfPresent([ItemID].self, forKey: .ids)
        let tag = try container.decodeIfPresent(String.self, forKey: .tag)
        let state = try container.decodeIfPresent(QuietSwitch.self, forKey: .state)
        let until = try container.decodeIfPresent(Double.self, forKey: .until)
        let alert = try container.decodeIfPresent(AlertRequest.self, forKey: .alert)
        switch operation {
        case .play:
            guard let items, !items.isEmpty else { throw RequestRefusal(message: "play needs at least one item") }
            self = .play(PlayRequest(items: items, wait: wait, progress: progress, key: key))
        case .alert:
            guard let alert else { throw RequestRefusal(message: "alert needs an \"alert\"") }
            self = .alert(alert, wait: wait)
        case .wait: self = .wait(ids: ids ?? [], progress: progress)
        case .status: self = .status
        case .skip: self = .skip
        case .pause: self = .pause
        case .resume: self = .resume
        case .stop: self = .stop
        case .clear: self = .clear
        case .cancel:
            if let tag {
                self = .cancel(.tag(tag))
            } else if let ids, !ids.isEmpty {
                self = .cancel(.ids(ids))
            } else {
                throw RequestRefusal(message: "cancel needs ids or a tag")
            }
        case .events: self = .events
        case .quiet:
            switch state {
            case nil: throw RequestRefusal(message: "quiet needs a state: on, off or until")
            case .on?: self = .quiet(.on)
            case .off?: self = .quiet(.off)
            case .until?:
                guard let until else { throw RequestRefusal(message: "quiet until needs an \"until\" time") }
                self = .quiet(.until(until))
            }
        }
    }

    /// The fields of its op; `wait` and `progress` are written even when false.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(WireProtocol.version, forKey: .v)
        try container.encode(operation, forKey: .op)
        switch self {
        case .play(let play):
            try container.encode(play.items, forKey: .items)
            try container.encode(play.wait, forKey: .wait)
            try container.encode(play.progress, forKey: .progress)
            try container.encodeIfPresent(play.key, forKey: .key)
        case .alert(let alert, let wait):
            try container.encode(alert, forKey: .alert)
            try container.encode(wait, forKey: .wait)
        case .wait(let ids, let progress):
            try container.encode(ids, forKey: .ids)
            try container.encode(progress, forKey: .progress)
        case .cancel(.ids(let ids)): try container.encode(ids, forKey: .ids)
        case .cancel(.tag(let tag)): try container.encode(tag, forKey: .tag)
        case .quiet(.on): try container.encode(QuietSwitch.on, forKey: .state)
        case .quiet(.off): try container.encode(QuietSwitch.off, forKey: .state)
        case .quiet(.until(let until)):
            try container.encode(QuietSwitch.until, forKey: .state)
            try container.encode(until, forKey: .until)
        case .status, .skip, .pause, .resume, .stop, .clear, .events: break
        }
    }
}
