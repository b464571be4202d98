/// What other applications play on the sound server announce's items reach (DESIGN §3,
/// Interruptions from other applications, Other audio playing): the iOS
/// `isOtherAudioPlaying` / `secondaryAudioShouldBeSilencedHint`, and whether a call is on. Pure:
/// the daemon's watcher lists the server's streams and makes one of these from them.
///
/// Rules:
/// - announce's own streams (its process id, or media.role=announce) never count.
/// - Another application's stream plays while it is not corked (paused by its application).
/// - A call is a playing stream whose media.role is one of the interrupting roles (`phone` and
///   `communication` unless the config file's `interrupting-roles` says otherwise); the first
///   such stream, in the server's order, names it.
public struct OtherAudioScene: Equatable, Sendable {
    /// Other applications' playing streams, as `name(of:)` says each, in the server's order.
    public var playing: [String]
    /// The call's stream, as `name(of:)` says it; nil when no call is on.
    public var call: String?

    public static let defaultInterruptingRoles = ["phone", "communication"]

    public init(playing: [String] = [], call: String? = nil) {
        self.playing = playing
        self.call = call
    }

    public init(streams: [OtherStream], ownProcessID: Int64, interruptingRoles: [String]) {
        let others = streams.filter { !$0.corked && $0.processID != ownProcessID && $0.role != OtherAudioDuck.ownRole }
        playing = others.map(Self.name)
        call = others.first { !$0.role.isEmpty && interruptingRoles.contains($0.role) }.map(Self.name)
    }

    public var isOtherAudioPlaying: Bool { !playing.isEmpty }

    /// `paplay (pid 4242, role phone)`: the application, and what the server knows of the stream.
    public static func name(of stream: OtherStream) -> String {
        let details = [stream.processID.map { "pid \($0)" }, stream.role.isEmpty ? nil : "role \(stream.role)"]
            .compactMap { $0 }
        let application = stream.application.isEmpty ? "stream #\(stream.index)" : stream.application
        return details.isEmpty ? application : "\(application) (\(details.joined(separator: ", ")))"
    }

    /// What a change of scene means for announce's session: a call began (naming its stream) or
    /// ended; nil when neither (another call's stream taking over from the first is no news).
    public func callChange(from old: OtherAudioScene?) -> CallChange? {
        switch (old?.call, call) {
        case (nil, let by?): .began(by: by)
        case (_?, nil): .ended
        default: nil
        }
    }

    public enum CallChange: Equatable, Sendable {
        case began(by: String)
        case ended
    }
}

/// `--if-other-audio`: what an item does when other audio plays as it is about to start
/// (DESIGN §3, Other audio playing). Decided once, at its first start; a resume plays on.
public enum IfOtherAudio: String, Codable, CaseIterable, Sendable {
    /// Plays whatever else plays (the default).
    case play
    /// Plays as with `--duck-others`: the other audio is lowered while it plays.
    case duck
    /// Waits, keeping its place, until no other audio plays (bounded by `--expire`).
    case wait
    /// Ends `silenced` (the iOS secondaryAudioShouldBeSilencedHint).
    case skip

    /// The outcome's reason for `skip`, and the hold's words for `wait`.
    public static let reason = "other audio playing"

    public enum Start: Equatable, Sendable {
        case play
        case playDucking
        case wait
        case silence(reason: String)
    }

    /// How an item starts with this choice; `otherAudioPlaying` nil: not known (no sound
    /// server answers): nothing plays there, so it plays.
    public func start(otherAudioPlaying: Bool?) -> Start {
        guard otherAudioPlaying == true else { return .play }
        switch self {
        case .play: return .play
        case .duck: return .playDucking
        case .wait: return .wait
        case .skip: return .silence(reason: Self.reason)
        }
    }
}
