import AnnounceModel

/// What the engine driver tells the control side; posted from the play threads.
enum EngineReport: Sendable, Equatable {
    /// The first frames of this play went to the device.
    /// `buffering`: how the device was opened to buffer ("2 periods of 60 ms"), for the log.
    case started(
        id: ItemID, device: DeviceName, format: String, buffering: String, sampleRate: Int, totalFrames: Int64?)
    /// Frames heard so far in this play; the program's exact length once counted after the start.
    case progress(id: ItemID, framesPlayed: Int64, sampleRate: Int, totalFrames: Int64?)
    /// The play ended: frames heard in it, the program's length when known.
    case ended(
        id: ItemID, heardFrames: Int64, totalFrames: Int64?, sampleRate: Int?, end: PlaybackEnd, details: PlayDetails)
    /// These devices were closed (idle, or another device is needed).
    case devicesClosed([DeviceName])
    /// A live stream's title changed (nil: it has none now).
    case title(id: ItemID, title: String?)
    /// What other applications play changed (the watcher's, `OtherAudioWatcher`; nil: not watched, or no sound server).
    case otherAudio(OtherAudioScene?)
    /// One look the control thread asked for (`OtherAudioWatcher.lookSoon`) while it does not watch.
    case otherAudioLooked(OtherAudioScene?)
}

/// How a play went, for the finished event and the client's debug line.
struct PlayDetails: Sendable, Equatable {
    var devices: DeviceList
    var format: String?
    var warning: String?
    /// Frames heard in this play.
    var frames: Int64 = 0
    /// The whole item's heard fraction in units of its source's own (speech: sentences), for
    /// the drop-after rule; nil: by frames.
    var heardFraction: Double?
    /// A device could not be used: another program holds it (busy) or it went away (lost).
    var deviceTrouble: DeviceTrouble?
}

/// Which device had trouble (a multi-route play has several) and what.
enum DeviceTrouble: Sendable, Equatable {
    /// EBUSY at open; the reason names the holder.
    case busy(device: DeviceName, reason: String)
    /// Failed mid-play: unplugged, the sound server went away.
    case lost(device: DeviceName, reason: String)
    /// Could not be opened (missing, the sound server is not running).
    case unavailable(device: DeviceName, reason: String)

    var device: DeviceName {
        switch self {
        case .busy(let device, _), .lost(let device, _), .unavailable(let device, _): device
        }
    }
}

/// The devices one play used, in route order (several for a multi-route play).
struct DeviceList: Sendable, Equatable, CustomStringConvertible {
    var names: [DeviceName]

    init(_ names: [DeviceName]) { self.names = names }

    /// As the finished event and the log name them.
    var description: String { names.listed }
}
