import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import Synchronization

/// The engines, one per open device (plays on it share it), and an alert's own beside a stream
/// that plays through a sound server.
extension EngineDriver {
    /// Closes and forgets the engines nobody plays on (but `except`'s); returns the devices that were open.
    func closeIdleEngines(except devices: Set<DeviceName>) -> [DeviceName] {
        engines.withLock { engines in
            var closed: [DeviceName] = []
            for (name, engine) in engines.byDevice where !devices.contains(name) && engines.users[name, default: 0] == 0
            {
                if engine.closeOutputIfIdle() { closed.append(name) }
                engines.byDevice[name] = nil
                engines.spareOverlays.removeValue(forKey: name)?.engine.closeOutputIfIdle()
            }
            return closed.sorted()
        }
    }

    func acquireEngine(_ device: DeviceName) -> PlaybackEngine {
        engines.withLock { engines in
            engines.users[device, default: 0] += 1
            if let engine = engines.byDevice[device] { return engine }
            let engine = makeEngine(device)
            engines.byDevice[device] = engine
            return engine
        }
    }

    func makeEngine(_ device: DeviceName) -> PlaybackEngine {
        PlaybackEngine(device: device) { [openOutput, openEnvironments] device, request throws(AnnounceError) in
            try AudioEnvironment.whileApplied(openEnvironments[device]) { () throws(AnnounceError) in
                try openOutput(device, request)
            }
        }
    }

    /// An alert over something playing through a sound server's plugin gets an engine, and a
    /// stream, of its own: the server mixes it in at once, where the shared stream would have it
    /// wait behind what that stream has buffered. The device's spare when it still fits. Nil otherwise.
    func overlayEngine(_ device: DeviceName) -> PlaybackEngine? {
        engines.withLock { engines in
            guard let shared = engines.byDevice[device], shared.playsThroughServer else { return nil }
            if let spare = engines.spareOverlays.removeValue(forKey: device) {
                if spare.sharedOpenings == shared.openings { return spare.engine }
                spare.engine.closeOutputIfIdle()
            }
            return makeEngine(device)
        }
    }

    /// An alert's engine after its play: the device's spare while the shared engine is open
    /// (closed with it), unless its play failed; else closed now.
    func releaseOverlay(_ overlay: PlaybackEngine, device: DeviceName, keep: Bool) {
        engines.withLock { engines in
            if keep, let shared = engines.byDevice[device], engines.spareOverlays[device] == nil {
                engines.spareOverlays[device] = SpareOverlay(engine: overlay, sharedOpenings: shared.openings)
            } else {
                overlay.closeOutputIfIdle()
            }
        }
    }

    func releaseEngine(_ device: DeviceName) {
        engines.withLock { engines in
            engines.users[device, default: 1] -= 1
            if engines.users[device] == 0 { engines.users[device] = nil }
        }
    }
}
