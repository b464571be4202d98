extension Daemon {
    /// Values a client could not have checked for us: the daemon never trusts them.
    static func problem(with request: ItemRequest) -> String? {
        let clip = request.clip
        if !clip.path.hasPrefix("/") { return "path must be absolute, not \(clip.path)" }
        if clip.path.utf8.contains(0) { return "path contains a NUL byte" }
        if clip.path.utf8.count > 4096 { return "path is too long" }
        if !clip.gain.isFinite || clip.gain < 0 || clip.gain > 16 { return "gain must be 0 to 16, not \(clip.gain)" }
        if !(-1...1).contains(clip.pan) { return "pan must be -1 to 1, not \(clip.pan)" }
        if clip.loops < -1 || clip.loops > QueueItem.maxLoops { return "loops must be -1 to \(QueueItem.maxLoops), not \(clip.loops)" }
        let longest = TimeSpan.longest.seconds
        if let start = clip.start, !start.isFinite || start < 0 || start > longest { return "start must be 0 to \(longest) seconds" }
        if let device = clip.device, device.isEmpty || device.utf8.count > 1024 { return "device name is empty or too long" }
        if let dropAfter = request.dropAfter, !(0...1).contains(dropAfter) { return "dropAfter must be 0 to 1, not \(dropAfter)" }
        // `at` is a time since the epoch, the others durations: none may reach absurd values.
        for (name, value, limit) in [("at", request.at, 1e11), ("delay", request.delay, longest), ("expire", request.expire, longest)] {
            if let value, !value.isFinite || value < 0 || value > limit { return "\(name) must be 0 to \(limit), not \(value)" }
        }
        if let tag = request.tag, tag.isEmpty || tag.utf8.count > 256 { return "tag is empty or too long" }
        return nil
    }
}
