import AnnounceModel
import AnnounceSystem
import Logging

extension QueueController {
    /// The parts of the daemon the controller works through, made by `Daemon.run`.
    struct Parts {
        let runtime: RuntimeDirectory
        let logger: Logger
        let clock: WallClock
        let probeDevice: Daemon.DeviceProber
        let spool: Spool
        let driver: EngineDriver
        /// URL items' bodies, downloading from acceptance (or restart) to outcome.
        let downloads: Downloads?
    }

    /// Other applications' audio as the controller sees it (DESIGN §3).
    struct OtherAudioParts {
        /// Lowers other applications while a duck-others session plays; nil where the daemon must
        /// not touch a sound server (in-process tests).
        let ducker: OtherAudioDucker?
        /// Watches other applications' streams for calls and other audio; nil as the ducker.
        var watcher: OtherAudioWatcher?
        /// What other applications play, as last seen (nil: not watched now, or no sound server).
        var scene: OtherAudioScene?
        /// `status` requests waiting for the watcher's look at other audio (the control thread
        /// does not wait for a sound server).
        var statusWaiting: [Connection] = []
        /// Items the call in progress paused or keeps from starting (both lanes).
        var callInterrupted: Set<ItemID> = []

        init(ducker: OtherAudioDucker?) { self.ducker = ducker }
    }

    /// What the spool kept.
    struct Restored {
        /// Mixed-lane items, started once the socket listens.
        var mixed: [QueueItem] = []
        /// The ids of each play request, by the request's key: a request that a daemon spooled
        /// and died before answering is sent again, and is answered with these.
        var requests: [String: [ItemID]] = [:]
    }

    var runtime: RuntimeDirectory { parts.runtime }
    var logger: Logger { parts.logger }
    var clock: WallClock { parts.clock }
    var probeDevice: Daemon.DeviceProber { parts.probeDevice }
    var spool: Spool { parts.spool }
    var driver: EngineDriver { parts.driver }
    var downloads: Downloads? { parts.downloads }

    var ducker: OtherAudioDucker? { otherAudio.ducker }
    var otherAudioWatcher: OtherAudioWatcher? {
        get { otherAudio.watcher }
        set { otherAudio.watcher = newValue }
    }
    var otherAudioScene: OtherAudioScene? {
        get { otherAudio.scene }
        set { otherAudio.scene = newValue }
    }
    var statusWaiting: [Connection] {
        get { otherAudio.statusWaiting }
        _modify { yield &otherAudio.statusWaiting }
    }
    var callInterrupted: Set<ItemID> {
        get { otherAudio.callInterrupted }
        _modify { yield &otherAudio.callInterrupted }
    }
}
