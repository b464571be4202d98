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
    /// At most `Limits.maxItemsPerPlay` items, each without a problem (that a play has at least
    /// one is a decoding rule, Request.swift).
    public var problem: String? {
        if items.count > Limits.maxItemsPerPlay { return "at most \(Limits.maxItemsPerPlay) items per request" }
        if let key, !Self.isKey(key) { return "key: 1 to 64 letters, digits, '-' or '_'" }
        for (index, item) in items.enumerated() {
            if let problem = item.problem { return "items[\(index)]: \(problem)" }
        }
        let handed = items.flatMap { $0.clip.handed?.indices ?? [] }
        if Set(handed).count != handed.count { return "handed: a descriptor is named twice" }
        return nil
    }

    /// 1 to 64 ASCII letters, digits, `-` or `_`.
    static func isKey(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                let letter = byte | 0x20  // lower case
                return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(letter)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}

/// What is wrong with an item or an alert: the field and the rule it breaks, decided once here.
/// The daemon says it in the request's field names (`description`), the CLI in its options'
/// (Play.swift `optionText`), as with `DeviceProblem`.
public enum ItemProblem: Equatable, Sendable, CustomStringConvertible {
    case relativePath(String)
    case pathHasNUL
    case pathTooLong
    /// `pathBytes` is not an absolute path of at most `Limits.maxPathBytes` without NUL, or
    /// comes with speech; the reason.
    case pathBytes(String)
    /// Outside `Limits.gain`.
    case gain(Float)
    /// Outside `Limits.pan`.
    case pan(Float)
    /// A target outside `Limits.loudness`.
    case loudness(Double)
    /// `clip.chime` or `clip.chimeAfter` (the field) not an absolute path of at most
    /// `Limits.maxPathBytes` without NUL.
    case chime(String)
    /// Below -1 or above `Limits.maxLoops`.
    case loops(Int)
    /// `clip.start` outside 0 to `TimeSpan.longest`.
    case start
    case device(DeviceProblem)
    /// Not one of `Clip.environmentVariables`.
    case environmentVariable(String)
    /// A value longer than `Limits.maxPathBytes` or with a NUL byte.
    case environmentValue(String)
    /// `clip.seconds` outside 0 to `TimeSpan.longest`.
    case seconds
    /// Outside `Limits.dropAfter`.
    case dropAfter(Double)
    /// `at`, `delay` or `expire` outside 0 to its limit.
    case time(TimeField, Double)
    /// Empty or longer than `Limits.maxTagBytes`.
    case tag
    /// `at` or `delay` for a session that mixes (it starts at once).
    case timedMixable(AudioSession)
    /// `ifOtherAudio` `wait` for a session that mixes (it is never queued).
    case waitingMixable(AudioSession)
    /// Outside `UserConfiguration.duckLevelRange`.
    case duckLevel(Double)
    /// `clip.speech`: `Speech.problem`'s line.
    case speech(String)
    /// `clip.handed`: an index outside 0 to `Limits.maxHandedFiles`, a chime handed without its
    /// label, or audio handed beside speech, media, a URL or a stream.
    case handed
    /// Outside `Limits.rate` (NaN too).
    case rate(Double)
    /// Outside `Limits.pitch` (NaN too).
    case pitch(Double)
    /// `clip.media` not a `Clip.isValidMediaName`, or given with `clip.speech`.
    case media
    /// `clip.url` not of `Clip.urlSchemes`, too long, with a control character or with `media`;
    /// `clip.cache` without it, `clip.proxies` without it or a `clip.stream`.
    case url
    /// `clip.proxies`: not one of `Clip.proxyVariables`, or a value too long or with a NUL.
    case proxy(String)
    /// `clip.stream`: `Clip.streamProblem`.
    case stream(LiveStreamProblem)

    /// `at` is a time since the epoch, the others durations: none may reach absurd values.
    public enum TimeField: String, Sendable {
        case at, delay, expire

        public var limit: Double { self == .at ? Limits.latestTime : TimeSpan.longest.seconds }
    }

    public var description: String {
        let longest = TimeSpan.longest.seconds
        return switch self {
        case .relativePath(let path): "path must be absolute, not \(path)"
        case .pathHasNUL: "path contains a NUL byte"
        case .pathTooLong: "path is too long"
        case .pathBytes(let reason): "pathBytes \(reason)"
        case .gain(let gain): "gain must be \(text(Limits.gain)), not \(gain)"
        case .pan(let pan): "pan must be \(text(Limits.pan)), not \(pan)"
        case .loudness(let lufs): "loudness must be \(text(Limits.loudness)) LUFS or off, not \(lufs)"
        case .chime(let field): "\(field) must be an absolute path of at most \(Limits.maxPathBytes) bytes without NUL"
        case .loops(let loops): "loops must be -1 to \(Limits.maxLoops), not \(loops)"
        case .start: "start must be 0 to \(longest) seconds"
        case .device(let problem): problem.description
        case .environmentVariable(let name): "environment: \(name) is not a sound-server variable"
        case .environmentValue(let name): "environment: \(name) is too long or has a NUL byte"
        case .seconds: "seconds must be 0 to \(longest)"
        case .dropAfter(let dropAfter): "dropAfter must be \(text(Limits.dropAfter)), not \(dropAfter)"
        case .time(let field, let value): "\(field.rawValue) must be 0 to \(field.limit), not \(value)"
        case .tag: "tag is empty or too long"
        case .timedMixable(let session): "a mixable session (\(session)) starts at once; at and delay need a queued one"
        case .waitingMixable(let session):
            "a mixable session (\(session)) is never queued; --if-other-audio wait needs a queued one (play, duck or skip)"
        case .duckLevel(let level): "duckLevel must be \(text(UserConfiguration.duckLevelRange)) dB, not \(level)"
        case .speech(let problem): problem
        case .handed:
            "handed: descriptor indices are 0 to \(Limits.maxHandedFiles - 1); a chime's needs its label, and audio cannot be handed beside speech, media, a URL or a stream"
        case .rate(let rate): "rate must be \(Limits.rate.lowerBound) to \(Limits.rate.upperBound), not \(rate)"
        case .pitch(let pitch): "pitch must be \(text(Limits.pitch)) semitones, not \(pitch)"
        case .media: "media must be 1 to 64 lowercase hex digits, without speech"
        case .url:
            "url must be an http, https or file URL of at most \(Limits.maxPathBytes) bytes without spaces or control characters, and without media; cache needs it, proxies need it or a stream"
        case .proxy(let name): "proxies: \(name) is not a proxy variable, or its value is too long or has a NUL byte"
        case .stream(let problem): problem.description
        }
    }
}

extension ItemRequest {
    public var problem: ItemProblem? {
        if let media = clip.media, clip.speech != nil || !Clip.isValidMediaName(media) { return .media }
        if let handed = clip.handed,
            handed.indices.contains(where: { !(0..<Limits.maxHandedFiles).contains($0) })
                || (handed.audio != nil
                    && (clip.speech != nil || clip.media != nil || clip.url != nil || clip.stream != nil))
                || (handed.chime != nil && clip.chime == nil) || (handed.chimeAfter != nil && clip.chimeAfter == nil)
        {
            return .handed
        }
        if let problem = Self.urlProblem(clip) { return problem }
        if let problem = clip.streamProblem { return .stream(problem) }
        if clip.speech != nil || clip.media != nil || clip.url != nil || clip.stream != nil || clip.handed?.audio != nil
        {
            // The path is only its label.
            if let problem = clip.speech?.problem { return .speech(problem) }
            if clip.path.utf8.contains(0) { return .pathHasNUL }
            if clip.path.utf8.count > Limits.maxPathBytes { return .pathTooLong }
        } else if let problem = Self.pathProblem(clip.path) {
            return problem
        }
        if let problem = Self.pathBytesProblem(clip.pathBytes, speech: clip.speech != nil) { return problem }
        if let problem = Self.gainProblem(clip.gain) ?? Self.panProblem(clip.pan)
            ?? Self.loopsProblem(clip.loops) ?? clip.loudness.flatMap(Self.loudnessProblem)
        {
            return problem
        }
        if let problem = clip.rate.flatMap(Self.rateProblem) ?? clip.pitch.flatMap(Self.pitchProblem) { return problem }
        for (field, path) in [("chime", clip.chime), ("chimeAfter", clip.chimeAfter)] {
            if let path, Self.pathProblem(path) != nil { return .chime(field) }
        }
        let longest = TimeSpan.longest.seconds
        if let start = clip.start, !start.isFinite || start < 0 || start > longest { return .start }
        if let problem = devicesProblem { return .device(problem) }
        if let problem = Self.environmentProblem(clip.environment) { return problem }
        if let seconds = clip.seconds, !seconds.isFinite || seconds < 0 || seconds > longest { return .seconds }
        if let dropAfter, let problem = Self.dropAfterProblem(dropAfter) { return problem }
        let times: [(ItemProblem.TimeField, Double?)] = [(.at, at), (.delay, delay), (.expire, expire)]
        for (field, value) in times {
            if let value, !value.isFinite || value < 0 || value > field.limit { return .time(field, value) }
        }
        if let tag, let problem = Self.tagProblem(tag) { return problem }
        if let problem = Self.timingProblem(session ?? .default, timed: at != nil || delay != nil) { return problem }
        if ifOtherAudio == .wait, (session ?? .default).lane == .mixed { return .waitingMixable(session ?? .default) }
        if let duckLevel, !UserConfiguration.duckLevelRange.contains(duckLevel) {  // NaN is not contained either
            return .duckLevel(duckLevel)
        }
        return nil
    }

    /// `clip.device` and `clip.extraDevices` (`DeviceName`'s rules).
    private var devicesProblem: DeviceProblem? {
        DeviceName.problem(device: clip.device, extra: clip.extraDevices ?? [], category: session?.category ?? .default)
    }

    static func pathProblem(_ path: String) -> ItemProblem? {
        if !path.hasPrefix("/") { return .relativePath(path) }
        if path.utf8.contains(0) { return .pathHasNUL }
        if path.utf8.count > Limits.maxPathBytes { return .pathTooLong }
        return nil
    }

    /// `pathBytes`, when given: the bytes of an absolute file path (`path` then only shows it).
    static func pathBytesProblem(_ file: FileName?, speech: Bool = false) -> ItemProblem? {
        guard let file else { return nil }
        if speech { return .pathBytes("is for files, not speech") }
        if !file.isAbsolute { return .pathBytes("must be an absolute path, not \(file.text)") }
        if file.bytes.contains(0) { return .pathBytes("contains a NUL byte") }
        if file.bytes.count > Limits.maxPathBytes { return .pathBytes("is longer than \(Limits.maxPathBytes) bytes") }
        return nil
    }

    static func gainProblem(_ gain: Float) -> ItemProblem? {
        Limits.gain.contains(gain) ? nil : .gain(gain)  // NaN is not contained
    }

    // The rules the CLI also checks its options with, before it reads any file.

    public static func panProblem(_ pan: Float) -> ItemProblem? {
        Limits.pan.contains(pan) ? nil : .pan(pan)
    }

    public static func loudnessProblem(_ target: LoudnessTarget) -> ItemProblem? {
        target.isValid ? nil : target.lufs.map(ItemProblem.loudness)
    }

    public static func tagProblem(_ tag: String) -> ItemProblem? {
        tag.isEmpty || tag.utf8.count > Limits.maxTagBytes ? .tag : nil
    }

    public static func loopsProblem(_ loops: Int) -> ItemProblem? {
        (-1...Limits.maxLoops).contains(loops) ? nil : .loops(loops)
    }

    public static func rateProblem(_ rate: Double) -> ItemProblem? {
        Limits.rate.contains(rate) ? nil : .rate(rate)  // NaN is not contained
    }

    public static func pitchProblem(_ semitones: Double) -> ItemProblem? {
        Limits.pitch.contains(semitones) ? nil : .pitch(semitones)
    }

    public static func dropAfterProblem(_ dropAfter: Double) -> ItemProblem? {
        Limits.dropAfter.contains(dropAfter) ? nil : .dropAfter(dropAfter)
    }

    /// A session that mixes starts at once: `timed` (an `at` or a `delay`) needs a queued one.
    public static func timingProblem(_ session: AudioSession, timed: Bool) -> ItemProblem? {
        session.lane == .mixed && timed ? .timedMixable(session) : nil
    }

    /// A URL item's `url` and `proxies` (a live stream's proxies too); the daemon names its media.
    static func urlProblem(_ clip: Clip) -> ItemProblem? {
        for (name, value) in clip.proxies ?? [:]
        where !Clip.proxyVariables.contains(name) || value.utf8.count > Limits.maxPathBytes || value.utf8.contains(0) {
            return .proxy(name)
        }
        // A live stream's URL is `clip.stream`'s (`LiveStream.problem` checks it).
        guard let url = clip.url else {
            return (clip.proxies != nil && clip.stream == nil) || clip.cache != nil ? .url : nil
        }
        guard clip.media == nil, clip.speech == nil, let scheme = Clip.urlScheme(of: url),
            Clip.urlSchemes.contains(scheme),
            url.utf8.count <= Limits.maxPathBytes,
            !url.unicodeScalars.contains(where: { $0.value <= 32 || $0.value == 127 })
        else { return .url }
        return nil
    }

    /// Only `Clip.environmentVariables`, each value at most `Limits.maxPathBytes`, no NUL.
    static func environmentProblem(_ environment: [String: String]?) -> ItemProblem? {
        for (name, value) in environment ?? [:] {
            if !Clip.environmentVariables.contains(name) { return .environmentVariable(name) }
            if value.utf8.count > Limits.maxPathBytes || value.utf8.contains(0) { return .environmentValue(name) }
        }
        return nil
    }
}

/// `-1 to 1`: a limit's whole-numbered bounds as the messages give them.
private func text<Bound: BinaryFloatingPoint>(_ range: ClosedRange<Bound>) -> String {
    "\(Int(range.lowerBound)) to \(Int(range.upperBound))"
}

extension AlertRequest {
    /// `path` (and `pathBytes`) absolute, at most 4096 bytes, no NUL; `gain` 0 to 16; `device` a `DeviceName`.
    /// Whether the file is a PCM WAV/CAF/AIFF of at most 30 s is for the decoder (`SystemSound.refusal`).
    public var problem: ItemProblem? {
        if let problem = ItemRequest.pathProblem(path) ?? ItemRequest.pathBytesProblem(pathBytes)
            ?? ItemRequest.gainProblem(gain) ?? loudness.flatMap(ItemRequest.loudnessProblem)
        {
            return problem
        }
        if let device, let problem = device.problem() { return .device(problem) }
        if let handed, !(0..<Limits.maxHandedFiles).contains(handed) { return .handed }
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
            guard until > now else { throw .usage("quiet until: the time has already passed") }
            guard until <= now + TimeSpan.longest.seconds else {
                throw .usage("quiet until: the time is too far ahead")
            }
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
