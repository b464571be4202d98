import AnnounceModel
import AnnounceSystem
import CALSA

#if canImport(Glibc)
    import Glibc
#endif

/// A playback PCM ALSA knows about.
public struct PlaybackDevice: Equatable, Sendable, Codable {
    public var name: DeviceName
    public var description: String
    /// Why it cannot be opened here (no such card, no sound server), when it cannot.
    public var problem: String?
}

/// Lists playback PCMs from ALSA's name hints (cards and configured PCMs such as null, pulse).
public enum DeviceCatalog {
    /// With `probing`, each is opened and closed (as `DeviceProbe` does when an item is accepted)
    /// and those that fail carry the reason; a device another program holds counts as usable.
    public static func playbackDevices(probing: Bool = false) throws(AnnounceError) -> [PlaybackDevice] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        let status = snd_device_name_hint(-1, "pcm", &hints)
        guard status == 0, let list = hints else {
            throw .deviceUnavailable(
                device: "*", reason: "cannot list devices: \(String(cString: snd_strerror(status)))")
        }
        defer { snd_device_name_free_hint(list) }
        var devices: [PlaybackDevice] = []
        var cursor = list
        while let hint = cursor.pointee {
            defer { cursor += 1 }
            let direction = hintValue(hint, "IOID")
            guard direction == nil || direction == "Output", let name = hintValue(hint, "NAME") else { continue }
            let description = (hintValue(hint, "DESC") ?? "").split(separator: "\n").joined(separator: " — ")
            var device = PlaybackDevice(name: DeviceName(name), description: description)
            if probing {
                do throws(AnnounceError) {
                    try DeviceProbe.check(device.name, environment: nil)
                } catch {
                    if case .deviceUnavailable(_, let reason) = error {
                        device.problem = reason
                    } else {
                        device.problem = error.description
                    }
                }
            }
            devices.append(device)
        }
        return devices
    }

    private static func hintValue(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}
