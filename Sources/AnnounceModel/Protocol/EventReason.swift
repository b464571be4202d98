/// An event's `reason` (docs/protocol.md, Events): why an item waits (`waiting`), why it stopped
/// (`interruption-began`), what happened to a device (`route-change`), or, for `finished` and
/// `quiet`, a reason in words. On the wire it is the string `description` gives; any string
/// decodes (a newer daemon's reason is `.other`), so the JSON is the same bytes both ways.
public enum EventReason: Hashable, Sendable {
    // waiting
    /// In the queue behind others (`ahead`, `wait`).
    case queued
    /// Held until its time (`at`).
    case scheduled
    /// The user paused the queue (also `interruption-began` when a pause stopped it).
    case paused
    /// A session's interruption holds the lane (`warning` says which).
    case held
    // waiting and interruption-began
    /// Another program holds the device (`warning` names it).
    case deviceBusy
    /// The device went away mid-play.
    case deviceLost
    /// Another application's call plays (`warning` names its stream).
    case call
    /// `--if-other-audio wait`: other audio plays.
    case otherAudioPlaying
    // interruption-began
    /// An item of higher priority took the main lane.
    case preempted(by: ItemID)
    case nonMixableActivation
    case spokenAudioInterrupted
    /// A `--no-notify-others` session ended: waits for `announce resume`.
    case awaitingResume
    /// A session interrupted the main lane (status's `holds`).
    case interruptedBy(ItemID)
    // route-change
    case oldDeviceUnavailable
    case newDeviceAvailable
    /// Any other: an outcome's or quiet mode's reason in words, or one this version does not know.
    case other(String)

    /// The reason a string names; every string is one (`description` gives it back).
    public init(_ text: String) {
        if let plain = Self.plainByWord[text] {
            self = plain
        } else if let by = Self.suffix(of: text, after: "preempted by ") {
            self = .preempted(by: ItemID(by))
        } else if let by = Self.suffix(of: text, after: "interrupted by ") {
            self = .interruptedBy(ItemID(by))
        } else {
            self = .other(text)
        }
    }

    /// The reasons without a value, by their word: `description` is the one spelling.
    private static let plainByWord: [String: EventReason] = Dictionary(
        uniqueKeysWithValues: [
            queued, scheduled, paused, held, deviceBusy, deviceLost, call, otherAudioPlaying, nonMixableActivation,
            spokenAudioInterrupted, awaitingResume, oldDeviceUnavailable, newDeviceAvailable
        ].map { ($0.description, $0) })

    /// How the session policy's reasons are sent.
    public init(_ reason: InterruptionReason) {
        switch reason {
        case .preempted: self = .other(reason.rawValue)  // the scheduler's own carries the id: `preempted(by:)`
        case .nonMixableActivation: self = .nonMixableActivation
        case .spokenAudioInterrupted: self = .spokenAudioInterrupted
        case .deviceBusy: self = .deviceBusy
        case .deviceLost: self = .deviceLost
        case .call: self = .call
        }
    }

    private static func suffix(of text: String, after prefix: String) -> String? {
        text.hasPrefix(prefix) && text.count > prefix.count ? String(text.dropFirst(prefix.count)) : nil
    }
}

extension EventReason: CustomStringConvertible {
    /// As the wire spells it.
    public var description: String {
        switch self {
        case .queued: "queued"
        case .scheduled: "scheduled"
        case .paused: "paused"
        case .held: "held"
        case .deviceBusy: "device-busy"
        case .deviceLost: "device-lost"
        case .call: "call"
        case .otherAudioPlaying: IfOtherAudio.reason
        case .preempted(let by): "preempted by \(by)"
        case .nonMixableActivation: "non-mixable-activation"
        case .spokenAudioInterrupted: "spoken-audio-interrupted"
        case .awaitingResume: "waiting for announce resume"
        case .interruptedBy(let id): "interrupted by \(id)"
        case .oldDeviceUnavailable: "old-device-unavailable"
        case .newDeviceAvailable: "new-device-available"
        case .other(let text): text
        }
    }
}

extension EventReason: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// The `warning` of a `device-busy` reason, which names who holds the device: written by the
/// daemon (AnnounceOutput's DeviceHolders), read back by the progress line. The wire has only
/// this text, so its form is defined here once, both ways.
public enum BusyWarning {
    /// `busy, held by pid 4242 (mpv song.mp3)` for the holders' phrase; nil (none seen): a plain one.
    public static func text(holders: String?) -> String {
        holders.map { prefix + $0 } ?? "busy: another program is using it"
    }

    /// `held by pid 4242 (mpv song.mp3)`: the holders' phrase of a warning, else the warning itself.
    public static func holders(of warning: String) -> String {
        warning.hasPrefix(prefix) ? String(warning.dropFirst(prefix.count)) : warning
    }

    private static let prefix = "busy, "
}
