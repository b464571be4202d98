/// When a live stream whose connection dropped (or could not be made again) is tried again,
/// and when it is given up (DESIGN §4, Live streams): 0.5 s after the drop, doubling to at
/// most 8 s apart, until `limit` seconds have passed since the outage began (the config file's
/// `reconnect-limit`); the last try is made at the limit. A connection that played for
/// `steadyAfter` seconds ends an outage: its drop starts a new one. Pure: times come in.
public struct ReconnectBackoff: Equatable, Sendable {
    public static let firstDelay = 0.5
    public static let longestDelay = 8.0
    /// Audio for this long makes a connection good again, so that a stream that drops every
    /// few seconds still gives up, while one that drops once an hour never does.
    public static let steadyAfter = 10.0

    public enum Decision: Equatable, Sendable {
        /// Try again this many seconds from now.
        case retry(after: Double)
        /// The limit has passed: the stream fails.
        case giveUp
    }

    /// Seconds an outage may last.
    public let limit: Double
    /// When the outage under way began; nil while the stream plays.
    private var outageSince: Double?
    private var tries = 0

    public init(limit: Double) {
        self.limit = limit
    }

    /// The connection dropped, or a try failed, at `now`. `audioSince`: when the connection
    /// that dropped began to give audio; nil when it gave none.
    public mutating func dropped(at now: Double, audioSince: Double?) -> Decision {
        if let audioSince, now - audioSince >= Self.steadyAfter {
            outageSince = nil
            tries = 0
        }
        let since = outageSince ?? now
        outageSince = since
        let left = since + limit - now
        guard left > 0 else { return .giveUp }
        let delay = min(Self.longestDelay, Self.firstDelay * Double(1 << min(tries, 16)))
        tries += 1
        return .retry(after: min(delay, left))
    }
}
