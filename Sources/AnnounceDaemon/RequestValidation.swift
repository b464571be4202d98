import AnnounceModel
import AnnounceSystem
import AnnounceSources
import AnnounceOutput
import AnnounceEngine
/// Values a client could not have checked for us: the daemon never trusts them.
/// Each problem is one line naming the field (docs/protocol.md, "Errors and limits");
/// the daemon replies 64 with it.
extension Daemon {
    /// Longest path or device name, in bytes.
    static let maxPathBytes = 4096
    static let maxDeviceBytes = 1024

    static func problem(with request: ItemRequest) -> String? {
        let clip = request.clip
        if let problem = pathProblem(clip.path) { return problem }
        if let problem = gainProblem(clip.gain) { return problem }
        if !(-1...1).contains(clip.pan) { return "pan must be -1 to 1, not \(clip.pan)" }
        if clip.loops < -1 || clip.loops > QueueItem.maxLoops { return "loops must be -1 to \(QueueItem.maxLoops), not \(clip.loops)" }
        let longest = TimeSpan.longest.seconds
        if let start = clip.start, !start.isFinite || start < 0 || start > longest { return "start must be 0 to \(longest) seconds" }
        if let problem = devicesProblem(clip, category: request.session?.category ?? .default) { return problem }
        if let problem = environmentProblem(clip.environment) { return problem }
        if let seconds = clip.seconds, !seconds.isFinite || seconds < 0 || seconds > longest { return "seconds must be 0 to \(longest)" }
        if let dropAfter = request.dropAfter, !(0...1).contains(dropAfter) { return "dropAfter must be 0 to 1, not \(dropAfter)" }
        // `at` is a time since the epoch, the others durations: none may reach absurd values.
        for (name, value, limit) in [("at", request.at, 1e11), ("delay", request.delay, longest), ("expire", request.expire, longest)] {
            if let value, !value.isFinite || value < 0 || value > limit { return "\(name) must be 0 to \(limit), not \(value)" }
        }
        if let tag = request.tag, tag.isEmpty || tag.utf8.count > 256 { return "tag is empty or too long" }
        if (request.session ?? .default).lane == .mixed, request.at != nil || request.delay != nil {
            return "a mixable session (\(request.session ?? .default)) starts at once; at and delay need a queued one"
        }
        let duckRange = UserConfiguration.duckLevelRange
        if let level = request.duckLevel, !duckRange.contains(level) {  // NaN is not contained either
            return "duckLevel must be \(Int(duckRange.lowerBound)) to \(Int(duckRange.upperBound)) dB, not \(level)"
        }
        return nil
    }

    /// `op` alert: `alert.path` absolute, at most 4096 bytes, no NUL; `gain` 0 to 16; `device` 1 to 1024 bytes.
    /// Whether the file is a PCM WAV/CAF/AIFF of at most 30 s is for the decoder (`SystemSound.refusal`).
    static func problem(with alert: AlertRequest) -> String? {
        if let problem = pathProblem(alert.path) { return problem }
        if let problem = gainProblem(alert.gain) { return problem }
        if let device = alert.device, let problem = deviceNameProblem(device) { return problem }
        return environmentProblem(alert.environment)
    }

    private static func pathProblem(_ path: String) -> String? {
        if !path.hasPrefix("/") { return "path must be absolute, not \(path)" }
        if path.utf8.contains(0) { return "path contains a NUL byte" }
        if path.utf8.count > maxPathBytes { return "path is too long" }
        return nil
    }

    /// `clip.environment`: only `AudioEnvironment.variables`, each value at most 4096 bytes, no NUL.
    private static func environmentProblem(_ environment: [String: String]?) -> String? {
        for (name, value) in environment ?? [:] {
            if !AudioEnvironment.variables.contains(name) { return "environment: \(name) is not a sound-server variable" }
            if value.utf8.count > maxPathBytes || value.utf8.contains(0) { return "environment: \(name) is too long or has a NUL byte" }
        }
        return nil
    }

    private static func gainProblem(_ gain: Float) -> String? {
        !gain.isFinite || gain < 0 || gain > 16 ? "gain must be 0 to 16, not \(gain)" : nil
    }

    private static func deviceNameProblem(_ device: String) -> String? {
        if device.isEmpty || device.utf8.count > maxDeviceBytes { return "device name is empty or too long" }
        return DeviceProbe.relativeFileProblem(device)
    }

    /// `clip.device` and `clip.extraDevices`: at most `Clip.maxDevices` names in all, each 1 to 1024
    /// bytes, none twice; extra devices only for category multi-route.
    private static func devicesProblem(_ clip: Clip, category: SessionCategory) -> String? {
        let given = [clip.device].compactMap { $0 } + (clip.extraDevices ?? [])
        for device in given {
            if let problem = deviceNameProblem(device) { return problem }
        }
        guard let extra = clip.extraDevices, !extra.isEmpty else { return nil }
        if category != .multiRoute { return "extraDevices need category multi-route, not \(category)" }
        // A nil `device` is the daemon's device: it counts towards the limit too.
        if extra.count + 1 > Clip.maxDevices { return "at most \(Clip.maxDevices) devices, not \(extra.count + 1)" }
        var seen: Set<String> = []
        for device in given where !seen.insert(device).inserted { return "device \(device) is given twice" }
        return nil
    }
}
