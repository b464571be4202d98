import AnnounceModel
import AnnounceSystem

/// What happens when a device is busy or goes away, and when devices close (`DeviceSupervisor`
/// decides; this carries it out).
extension QueueController {
    // MARK: device trouble

    /// A play failed on its device: the hold that waits for it (with the events that say so
    /// the first time), or nil when the failure is final. `DeviceSupervisor` decides.
    func deviceTrouble(_ details: PlayDetails, item: QueueItem, now: Double) -> QueueHold? {
        guard let trouble = details.deviceTrouble,
            let wait = devices.failed(trouble, failsWhenBusy: item.ifBusy == .fail, now: now)
        else { return nil }
        let device = trouble.device
        func interrupted(_ reason: InterruptionReason, _ warning: String) {
            if lifecycles[item.id]?.interrupt() == true {
                hub.emit(
                    Event(
                        time: now,
                        .interruptionBegan(
                            EventItem(item), reason: EventReason(reason), heard: seconds(item.heardFrames, of: item.id),
                            device: device.rawValue, warning: warning)))
            }
        }
        switch wait {
        case .busy(let reason):
            interrupted(.deviceBusy, reason)
        case .lost(let reason, let newlyLost):
            if newlyLost {
                logger.warning(
                    "device '\(device)' lost: \(reason); \(item.id) keeps its place and resumes when it is back")
                hub.emit(
                    Event(
                        time: now,
                        .routeChange(reason: .oldDeviceUnavailable, device: device.rawValue, warning: reason)))
            }
            interrupted(.deviceLost, reason)
        case .stillLost:
            break
        }
        return wait.hold
    }

    /// Per-item devices close as soon as nothing plays on them (the engine driver closes only idle
    /// ones); the daemon's own device after its grace, once nothing plays at all.
    func scheduleDeviceClose(now: Double) {
        if devices.open.contains(where: { $0 != configuration.device }) {
            // Not the devices an item is about to play on (the next one may share its device).
            var inUse: Set<DeviceName> = [configuration.device]
            for item in lanes.onEngines {
                inUse.formUnion(item.clip.devices(default: configuration.device))
            }
            driver.closeDevices(except: inUse)
        }
        guard !isPlaying else { return }
        devices.nothingPlays(own: configuration.device, grace: configuration.keepOpen, now: now)
    }
}
