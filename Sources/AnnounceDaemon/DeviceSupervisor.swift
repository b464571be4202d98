import AnnounceModel

/// The devices as the control side knows them: which are open and when the daemon's own
/// closes after its grace, which have played, which were lost mid-play, who holds a busy
/// one, and when to try again (with backoff). Pure, on the daemon's clock: the daemon tells
/// it what the engines reported and carries out its answers.
struct DeviceSupervisor {
    static let firstRetryDelay = 0.25
    static let longestRetryDelay = 4.0

    /// Devices open now, as the engine driver reported.
    private(set) var open: Set<DeviceName> = []
    /// When the idle devices close: the daemon's own device's grace after the last play.
    private(set) var closeAt: Double?
    /// Every device something has started on: known to exist.
    private(set) var played: Set<DeviceName> = []
    /// Devices that failed mid-play: reopened with backoff until they are back.
    private(set) var lost: Set<DeviceName> = []
    /// Who holds the busy device (`busy, held by pid 1234 (firefox)`), for waiting clients.
    private(set) var busyReason: String?
    /// When the busy or lost device is tried again.
    private(set) var retryAt: Double?
    private var retryDelay = Self.firstRetryDelay

    /// Why a play waits for its device instead of failing.
    enum Wait: Equatable {
        /// Another program holds it; the reason names the holder.
        case busy(reason: String)
        /// It went away mid-play; `newlyLost` the first time it is seen gone.
        case lost(reason: String, newlyLost: Bool)
        /// A device lost earlier is still gone (or was taken meanwhile).
        case stillLost

        var hold: QueueHold { if case .busy = self { .deviceBusy } else { .deviceLost } }
    }

    /// A play started on `device`. True when that opened it.
    mutating func opened(_ device: DeviceName) -> Bool {
        played.insert(device)
        return open.insert(device).inserted
    }

    /// The engine driver closed `device`. True when it was open.
    mutating func closed(_ device: DeviceName) -> Bool {
        open.remove(device) != nil
    }

    /// Something starts playing: the devices stay open.
    mutating func playStarts() {
        closeAt = nil
    }

    /// Nothing plays any more: the daemon's own `device`, when open, closes after `grace`.
    mutating func nothingPlays(own device: DeviceName, grace: Double, now: Double) {
        if open.contains(device), closeAt == nil { closeAt = now + grace }
    }

    /// True once when the grace is over.
    mutating func closeIsDue(now: Double) -> Bool {
        guard let closeAt, closeAt <= now else { return false }
        self.closeAt = nil
        return true
    }

    /// The first start of an item on `device`: the device works, whatever waited for it is
    /// over. True when it had been lost.
    mutating func works(_ device: DeviceName) -> Bool {
        retryDelay = Self.firstRetryDelay
        return lost.remove(device) != nil
    }

    /// A play failed with `trouble` on its device. Busy (unless the item fails when busy) and
    /// lost devices are waited for, and a retry is scheduled; nil when the failure is final
    /// (an unknown device, a refused format, `--if-busy fail`).
    mutating func failed(_ trouble: DeviceTrouble, failsWhenBusy: Bool, now: Double) -> Wait? {
        let wait: Wait
        switch trouble {
        case .busy(_, let reason) where !failsWhenBusy:
            busyReason = reason
            wait = .busy(reason: reason)
        case .lost(let device, let reason):
            wait = .lost(reason: reason, newlyLost: lost.insert(device).inserted)
        case .unavailable, .busy:
            // Anything else (an unknown name, no sound server, --if-busy fail) is final.
            guard lost.contains(trouble.device) else { return nil }
            wait = .stillLost
        }
        if retryAt == nil {
            retryAt = now + retryDelay
            retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
        }
        return wait
    }

    /// True once when the retry is due: the held item and the streams waiting try again.
    mutating func retryIsDue(now: Double) -> Bool {
        guard let retryAt, retryAt <= now else { return false }
        self.retryAt = nil
        return true
    }

    /// Whether a device needs the accept-time check: not one that has played here (a later
    /// failure is waited for or reported like one mid-play), nor one lost mid-play (waited for).
    func isKnown(_ device: DeviceName) -> Bool {
        played.contains(device) || lost.contains(device)
    }

    /// What a stream waiting for `devices` waits for: a lost one, else a busy one.
    func waitReason(for devices: [DeviceName]) -> (reason: EventReason, warning: String?) {
        devices.contains(where: lost.contains) ? (.deviceLost, nil) : (.deviceBusy, busyReason)
    }
}
