import FoundationEssentials

/// The daemon's answer to one request, in request order (docs/protocol.md, Requests): one
/// shape per kind of answer, told apart on the wire by the fields present.
public enum Reply: Equatable, Sendable {
    /// `{"ok":true}`: skip, pause, resume, stop, clear, events, quiet, cancel by tag.
    case done
    /// play and alert: the new items' ids, in order, and `pausedSince` when the queue is paused.
    /// wait: the ids it will report on, and those nobody knows (`unknown`, omitted when empty).
    case ids([ItemID], unknown: [ItemID] = [], pausedSince: Double? = nil)
    /// cancel by ids: those not found or already final (possibly none; always written).
    case cancelled(unknown: [ItemID])
    case status(DaemonStatus)
    /// `{"ok":false,"error":...}`: the request was refused or failed.
    case failure(ReplyError)

    /// A failure with the exit status a client ends with (64 a bad request, 69 a device or the spool).
    public static func failure(_ code: Int32, _ message: String) -> Reply {
        .failure(ReplyError(code: code, message: message))
    }

    /// A bad request's error reply (64, a usage error).
    public static func refusal(_ message: String) -> Reply { .failure(AnnounceError.usage(message).exitCode, message) }

    public var ids: [ItemID]? {
        if case .ids(let ids, _, _) = self { ids } else { nil }
    }

    /// wait, cancel: the ids that are not (or no longer) known.
    public var unknown: [ItemID]? {
        switch self {
        case .ids(_, let unknown, _): unknown
        case .cancelled(let unknown): unknown
        default: nil
        }
    }

    public var pausedSince: Double? {
        if case .ids(_, _, let since) = self { since } else { nil }
    }

    public var status: DaemonStatus? {
        if case .status(let status) = self { status } else { nil }
    }

    public var error: ReplyError? {
        if case .failure(let error) = self { error } else { nil }
    }
}

public struct ReplyError: Codable, Equatable, Sendable {
    /// The exit status a client should end with (DESIGN §1).
    public var code: Int32
    public var message: String
}

extension Reply: Codable {
    private enum Key: String, CodingKey {
        case v, ok, error, ids, unknown, status, pausedSince
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        _ = try container.decode(Int.self, forKey: .v)
        let ok = try container.decode(Bool.self, forKey: .ok)
        if let error = try container.decodeIfPresent(ReplyError.self, forKey: .error), !ok {
            self = .failure(error)
        } else if !ok {
            self = .failure(
                ReplyError(code: AnnounceError.internalExitCode, message: "the daemon failed without saying why"))
        } else if let status = try container.decodeIfPresent(DaemonStatus.self, forKey: .status) {
            self = .status(status)
        } else if let ids = try container.decodeIfPresent([ItemID].self, forKey: .ids) {
            self = .ids(
                ids, unknown: try container.decodeIfPresent([ItemID].self, forKey: .unknown) ?? [],
                pausedSince: try container.decodeIfPresent(Double.self, forKey: .pausedSince))
        } else if let unknown = try container.decodeIfPresent([ItemID].self, forKey: .unknown) {
            self = .cancelled(unknown: unknown)
        } else {
            self = .done
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(WireProtocol.version, forKey: .v)
        switch self {
        case .failure(let error):
            try container.encode(false, forKey: .ok)
            try container.encode(error, forKey: .error)
            return
        case .done: break
        case .ids(let ids, let unknown, let pausedSince):
            try container.encode(ids, forKey: .ids)
            if !unknown.isEmpty { try container.encode(unknown, forKey: .unknown) }
            try container.encodeIfPresent(pausedSince, forKey: .pausedSince)
        case .cancelled(let unknown): try container.encode(unknown, forKey: .unknown)
        case .status(let status): try container.encode(status, forKey: .status)
        }
        try container.encode(true, forKey: .ok)
    }
}

/// What a client reads: a reply to its request or an event, told apart by `event`.
public enum DaemonMessage: Sendable {
    case reply(Reply)
    case event(Event)

    /// The message on a line; nil for an event this client cannot read (a newer daemon's kind:
    /// clients skip those). Throws for a line that is neither.
    public static func decode(_ line: some Collection<UInt8>) throws -> DaemonMessage? {
        try JSONCoding.decode(Line.self, from: line).message
    }

    /// One parse: the line's `event` field decides how the rest is read.
    private struct Line: Decodable {
        var message: DaemonMessage?

        private enum Key: String, CodingKey { case event }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            if (try? container.decodeIfPresent(String.self, forKey: .event)) != nil {
                message = (try? Event(from: decoder)).map(DaemonMessage.event)
            } else {
                message = .reply(try Reply(from: decoder))
            }
        }
    }
}
