/// The values a request may hold (docs/protocol.md, "Errors and limits"), decided here once:
/// the client asks before it sends, the daemon on receipt (it never trusts a client). Each
/// problem is one line naming the field; the daemon replies 64 with it.
extension Request {
    /// Why the daemon refuses this request, or nil. `play`: `items[N]: reason`; `alert`: `alert: reason`.
    public var problem: String? {
        switch self {
        case .play(let play): play.problem
        case .alert(let alert, _): alert.problem.map { "alert: \($0)" }
        default: nil
        }
    }
}

extension PlayRequest {
    public var problem: String? {
        if items.isEmpty { return "play needs at least one item" }
        if items.count > Limits.maxItemsPerPlay { return "at most \(Limits.maxItemsPerPlay) items per request" }
        for (index, item) in items.enumerated() {
            if let problem = item.problem { return "items[\(index)]: \(problem)" }
        }
        return nil
    }
}

extension ItemRequest {
    public var problem: String? {
        if let problem = Self.pathProblem(clip.path) { return problem }
        if let problem = Self.gainProblem(clip.gain) { return problem }
        if !Limits.pan.contains(clip.pan) { return "pan must be \(text(Limits.pan)), not \(clip.pan)" }
        if clip.loops < -1 || clip.loops > Limits.maxLoops { return "loops must be -1 to \(Limits.maxLoops), not \(clip.loops)" }
        let longest = TimeSpan.longest.seconds
        if let start = clip.start, !start.isFinite || start < 0 || start > longest { return "start must be 0 to \(longest) seconds" }
        if let problem = devicesProblem { return problem }
        if let problem = Self.environmentProblem(clip.environment) { return problem }
        if let seconds = clip.seconds, !seconds.isFinite || seconds < 0 || seconds > longest { return "seconds must be 0 to \(longest)" }
        if let dropAfter, !Limits.dropAfter.contains(dropAfter) { return "dropAfter must be \(text(Limits.dropAfter)), not \(dropAfter)" }
        // `at` is a time since the epoch, the others durations: none may reach absurd values.
        for (name, value, limit) in [("at", at, Limits.latestTime), ("delay", delay, longest), ("expire", expire, longest)] {
            if let value, !value.isFinite || value < 0 || value > limit { return "\(name) must be 0 to \(limit), not \(value)" }
        }
        if let tag, tag.isEmpty || tag.utf8.count > Limits.maxTagBytes { return "tag is empty or too long" }
        if (session ?? .default).lane == .mixed, at != nil || delay != nil {
            return "a mixable session (\(session ?? .default)) starts at once; at and delay need a queued one"
        }
        if let duckLevel, !UserConfiguration.duckLevelRange.contains(duckLevel) {  // NaN is not contained either
            return "duckLevel must be \(text(UserConfiguration.duckLevelRange)) dB, not \(duckLevel)"
        }
        return nil
    }

    /// `clip.device` and `clip.extraDevices` (`DeviceName`'s rules).
    private var devicesProblem: String? {
        DeviceName.problem(device: clip.device, extra: clip.extraDevices ?? [], category: session?.category ?? .default)?.description
    }

    static func pathProblem(_ path: String) -> String? {
        if !path.hasPrefix("/") { return "path must be absolute, not \(path)" }
        if path.utf8.contains(0) { return "path contains a NUL byte" }
        if path.utf8.count > Limits.maxPathBytes { return "path is too long" }
        return nil
    }

    static func gainProblem(_ gain: Float) -> String? {
        Limits.gain.contains(gain) ? nil : "gain must be \(text(Limits.gain)), not \(gain)"  // NaN is not contained
    }

    /// Only `Clip.environmentVariables`, each value at most `Limits.maxPathBytes`, no NUL.
    static func environmentProblem(_ environment: [String: String]?) -> String? {
        for (name, value) in environment ?? [:] {
            if !Clip.environmentVariables.contains(name) { return "environment: \(name) is not a sound-server variable" }
            if value.utf8.count > Limits.maxPathBytes || value.utf8.contains(0) { return "environment: \(name) is too long or has a NUL byte" }
        }
        return nil
    }
}

/// `-1 to 1`: a limit's whole-numbered bounds as the messages give them.
private func text<Bound: BinaryFloatingPoint>(_ range: ClosedRange<Bound>) -> String {
    "\(Int(range.lowerBound)) to \(Int(range.upperBound))"
}

extension AlertRequest {
    /// `path` absolute, at most 4096 bytes, no NUL; `gain` 0 to 16; `device` a `DeviceName`.
    /// Whether the file is a PCM WAV/CAF/AIFF of at most 30 s is for the decoder (`SystemSound.refusal`).
    public var problem: String? {
        if let problem = ItemRequest.pathProblem(path) { return problem }
        if let problem = ItemRequest.gainProblem(gain) { return problem }
        if let device, let problem = DeviceName.problem(device) { return problem.description }
        return ItemRequest.environmentProblem(environment)
    }
}

extension QuietRequest {
    /// The switch as the daemon keeps it, set at `now`; throws (64) an `until` that has passed or
    /// lies beyond `TimeSpan.longest`.
    public func setting(at now: Double) throws(AnnounceError) -> QuietSetting {
        switch self {
        case .on: return .on
        case .off: return .off(since: now)
        case .until(let until):
            guard until.isFinite else { throw .usage("quiet until needs an \"until\" time") }
            guard until > now else { throw .usage("quiet until: the time has already passed") }
            guard until <= now + TimeSpan.longest.seconds else { throw .usage("quiet until: the time is too far ahead") }
            return .until(until)
        }
    }
}

extension WireProtocol {
    /// A decoding error as one line naming the field: `items[0].clip.path: expected String`.
    public static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
            return keys.isEmpty ? "" : String(keys.drop { $0 == "." }) + ": "
        }
        switch error {
        case .typeMismatch(let type, let context): return "\(path(context))expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context))missing \(type)"
        case .keyNotFound(let key, let context): return "\(path(context))missing \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(path(context))invalid value"
        @unknown default: return "invalid"
        }
    }
}
