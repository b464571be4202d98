/// What announce shows as an MPRIS player (`org.mpris.MediaPlayer2.announce`), read from the
/// queue's status: the one place that decides the status and the track.
public struct NowPlaying: Equatable, Sendable {
    public var status: PlaybackStatus
    /// The item's id; nil: no track.
    public var id: ItemID?
    /// The clip's label or path, or the text said.
    public var title: String?
    /// Seconds, when known.
    public var duration: Double?
    /// Seconds heard of the item shown.
    public var position: Double?
    /// Something waits after the item shown (Next would start it).
    public var hasNext: Bool

    public static let stopped = NowPlaying(status: .stopped, hasNext: false)

    public init(
        status: PlaybackStatus, id: ItemID? = nil, title: String? = nil, duration: Double? = nil,
        position: Double? = nil, hasNext: Bool
    ) {
        self.status = status
        self.id = id
        self.title = title
        self.duration = duration
        self.position = position
        self.hasNext = hasNext
    }

    /// Playing: the main lane's item, else a mixing one. Paused: the queue is paused with
    /// something to play (shown: the next of it). Stopped: nothing plays or waits.
    public init(_ status: DaemonStatus) {
        let mixing = (status.mixing ?? []).filter { $0.state == .playing }
        if let item = status.playing ?? mixing.first {
            self.init(status: .playing, item: item, hasNext: !status.queued.isEmpty)
        } else if status.paused, let item = status.queued.first {
            self.init(status: .paused, item: item, hasNext: status.queued.count > 1)
        } else {
            self = .stopped
        }
    }

    private init(status: PlaybackStatus, item: ItemStatus, hasNext: Bool) {
        self.init(
            status: status, id: item.id, title: item.path, duration: item.duration, position: item.heard,
            hasNext: hasNext)
    }

    /// What each MPRIS control does to the queue: the request `announce` itself would send.
    public static func request(for control: PlayerControl, paused: Bool) -> Request {
        switch control {
        case .play: .resume
        case .pause: .pause
        case .playPause: paused ? .resume : .pause
        case .next: .skip
        case .stop: .stop
        }
    }
}

/// The MPRIS Player methods that act on the queue.
public enum PlayerControl: String, Sendable {
    case play = "Play"
    case pause = "Pause"
    case playPause = "PlayPause"
    case next = "Next"
    case stop = "Stop"
}
