/// What the system queue refuses a caller (77) that a user's own daemon would take (DESIGN §8):
/// the daemon opens nothing a caller names, and plays on no device a caller makes up.
extension ItemRequest {
    /// Why this item is refused to `caller`, or nil. `allowedDevices`: `[system] devices`, else
    /// the daemon's own device (a clip naming none plays there).
    public func systemRefusal(for caller: Caller, allowedDevices: [DeviceName]) -> String? {
        if !caller.isSelf {
            // A file reaches the system queue only as a descriptor the client opened.
            let isFile = clip.speech == nil && clip.url == nil && clip.stream == nil
            if isFile && clip.handed?.audio == nil {
                return clip.media != nil
                    ? "clip.media: the system queue takes no media name; hand the file over"
                    : "\(clip.path): the system queue opens no caller's path; hand the file over (announce does)"
            }
            for (field, path, handed) in [
                ("chime", clip.chime, clip.handed?.chime), ("chimeAfter", clip.chimeAfter, clip.handed?.chimeAfter)
            ]
            where path != nil && handed == nil {
                return "clip.\(field) \(path!): the system queue opens no caller's path; hand the file over"
            }
        }
        if caller.uid == 0 || caller.isSelf { return nil }
        if let url = clip.url, Clip.urlScheme(of: url) == "file" {
            return "\(url): file:// URLs are root's on the system queue; play the file instead"
        }
        if let voice = clip.speech?.voice, voice.contains("/") {
            return "speech.voice \(voice): the system queue takes a voice's name, not a path"
        }
        let named = [clip.device].compactMap { $0 } + (clip.extraDevices ?? [])
        if let device = named.first(where: { !allowedDevices.contains($0) }) {
            return
                "device '\(device)' is not one the system queue lets users choose ([system] devices: \(allowedDevices.listed))"
        }
        return nil
    }
}

extension AlertRequest {
    /// As `ItemRequest.systemRefusal`: a handed sound, and an allowed device.
    public func systemRefusal(for caller: Caller, allowedDevices: [DeviceName]) -> String? {
        if !caller.isSelf && handed == nil {
            return "\(path): the system queue opens no caller's path; hand the file over (announce does)"
        }
        if caller.uid == 0 || caller.isSelf { return nil }
        if let device, !allowedDevices.contains(device) {
            return
                "device '\(device)' is not one the system queue lets users choose ([system] devices: \(allowedDevices.listed))"
        }
        return nil
    }
}

extension Caller {
    /// Why `caller` may not use control `operation` (pause, resume, stop, clear, quiet), or nil.
    public func controlRefusal(_ operation: Operation, controlGroup: String?) -> String? {
        guard !mayControl else { return nil }
        let who = controlGroup.map { "root and group '\($0)'" } ?? "root"
        return "\(operation.rawValue) is for \(who) on the system queue, not \(name)"
    }
}
