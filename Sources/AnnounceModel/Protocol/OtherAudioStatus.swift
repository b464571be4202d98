/// Whether announce is lowering other applications' audio now (`status`, DESIGN §3 duckOthers).
public struct OtherAudioStatus: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable {
        /// No duck-others item plays, and nothing of others is lowered.
        case idle
        /// Other applications' streams are lowered (or ramping down or back up).
        case ducking
        /// A duck-others item plays but no sound server answers (plain ALSA): nothing to duck.
        case noSoundServer = "no-sound-server"
    }

    public var state: State
    /// Streams of other applications lowered now.
    public var streams: Int
    /// With no-sound-server: why (libpulse's words).
    public var reason: String?

    public init(state: State, streams: Int = 0, reason: String? = nil) {
        self.state = state
        self.streams = streams
        self.reason = reason
    }
}
