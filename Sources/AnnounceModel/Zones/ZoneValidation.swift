import FoundationEssentials

/// A play message is checked as strictly as a socket request, and more: it comes from another
/// machine, so it may not name anything of this one (a path, a device, a media file, sound-server
/// or proxy variables, a `file://` URL). Each problem is one line naming the field.
extension RemotePlay {
    /// The play a message holds, or why none: not JSON, a wrong version, a bad field.
    public static func decode(_ payload: [UInt8]) -> Result<RemotePlay, ZoneRefusal> {
        guard payload.count <= ZoneLimits.maxMessageBytes else {
            return .failure(
                ZoneRefusal(id: nil, reason: "message of \(payload.count) bytes is over \(ZoneLimits.maxMessageBytes)"))
        }
        let play: RemotePlay
        do {
            play = try JSONCoding.decode(RemotePlay.self, from: payload)
        } catch let error as DecodingError {
            return .failure(ZoneRefusal(id: nil, reason: "malformed play: \(WireProtocol.describe(error))"))
        } catch {
            return .failure(ZoneRefusal(id: nil, reason: "malformed play: not a JSON object"))
        }
        // An id worth answering to: the refusal can go back to the sender.
        guard play.id.isWellFormed else {
            return .failure(ZoneRefusal(id: nil, reason: "id must be 16 to 64 lowercase hex digits"))
        }
        if let problem = play.problem { return .failure(ZoneRefusal(id: play.id, reason: problem)) }
        return .success(play)
    }

    /// Why a host refuses this play, or nil.
    public var problem: String? {
        if v != WireProtocol.version { return "unsupported version \(v); this host speaks \(WireProtocol.version)" }
        if let problem = ZoneName.problem(from, kind: "host") { return "from: \(problem)" }
        // Its times are counted from `sent`: an absurd one would make absurd waits and expiries.
        if !(0...Limits.latestTime).contains(sent) { return "sent must be 0 to \(Limits.latestTime), not \(sent)" }
        if items.isEmpty { return "a play needs at least one item" }
        let audioBytes = items.reduce(0) { $0 + $1.audioBytes }
        if audioBytes > ZoneLimits.maxAudioBytes {
            return "audio of \(audioBytes) bytes is over \(ZoneLimits.maxAudioBytes)"
        }
        for (index, entry) in items.enumerated() {
            if let problem = entry.problem { return "items[\(index)]: \(problem)" }
        }
        return PlayRequest(
            items: items.map {
                $0.local(
                    media: $0.audio == nil ? nil : "0", chime: $0.chime.map { _ in "/0" },
                    chimeAfter: $0.chimeAfter.map { _ in "/0" })
            }
        ).problem
    }
}

extension RemoteItem {
    /// What this host may not take from another: anything naming a local file or device.
    public var problem: String? {
        let clip = item.clip
        if clip.device != nil || clip.extraDevices != nil { return "clip.device: a host plays on its own devices" }
        if clip.environment != nil { return "clip.environment: not taken from another host" }
        if clip.proxies != nil { return "clip.proxies: not taken from another host" }
        if clip.media != nil || clip.pathBytes != nil { return "clip.media: names a file of the sender" }
        if clip.chime != nil || clip.chimeAfter != nil {
            return "clip.chime: names a file of the sender; a chime travels as its bytes"
        }
        if chime?.isEmpty == true || chimeAfter?.isEmpty == true { return "chime is empty" }
        if let url = clip.url, Clip.urlScheme(of: url) == "file" {
            return "clip.url: a file:// URL names a file of the sender"
        }
        if let speech = clip.speech {
            for (field, value) in [("voice", speech.voice), ("lang", speech.language)] {
                if let value, !Self.isVoiceName(value) {
                    return "speech.\(field): '\(value)' is a path or URL, not a voice name"
                }
            }
        }
        let kinds = [audio != nil, clip.url != nil, clip.speech != nil, clip.stream != nil].filter { $0 }.count
        if kinds != 1 { return "needs exactly one of audio, clip.url, clip.speech, clip.stream" }
        if let audio, audio.isEmpty { return "audio is empty" }
        return nil
    }

    /// A voice or language as another host may give it: a name, never a path or URL (piper loads
    /// a `.onnx` file named with a `/`, flite's `-voice` takes a path or URL, espeak-ng a voice file).
    static func isVoiceName(_ name: String) -> Bool {
        !name.hasPrefix(".") && !name.contains(where: { $0 == "/" || $0 == ":" || $0 == "\\" })
    }

    /// The item as this host queues it: its audio in media file `media` (the clip's path is then
    /// only its label, as for `play -`), its chimes in the files at `chime` and `chimeAfter`.
    public func local(media: String?, chime: String? = nil, chimeAfter: String? = nil) -> ItemRequest {
        var local = item
        local.clip.media = media
        local.clip.chime = chime
        local.clip.chimeAfter = chimeAfter
        return local
    }
}

/// A play message a host does not play: logged, and answered to its sender when it has an id.
public struct ZoneRefusal: Error, Equatable, Sendable {
    public var id: PlayID?
    public var reason: String

    public init(id: PlayID?, reason: String) {
        self.id = id
        self.reason = reason
    }
}
