import FoundationEssentials
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// The session layer on the wire and in the spool: `session`, `duckLevel`, `ifBusy`,
/// `clip.extraDevices`, op `alert`, event `route-change`; and the JSON written before them.
@Suite struct SessionWireTests {
    private func decode<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    private func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func aSpoolEntryWithOnlyACategoryDecodesIntoASession() throws {
        // Written by the daemon before sessions existed (commit f1d18b2), byte for byte.
        let old = """
            {"arrival":1795300167.96,"category":"playback","clip":{"gain":1,"loops":0,"pan":0,"path":"/tmp/a.wav"},\
            "dropAfter":0.8,"heardFrames":24000,"id":"0a0ad6c1de08","interrupted":true,"interrupts":true,\
            "onInterrupt":"resume","priority":"high","sequence":7,"started":true,"tag":"backup","totalFrames":48000}
            """
        let item = try decode(QueueItem.self, old)
        #expect(item.session == AudioSession(category: .playback))
        #expect(item.audioSession == AudioSession(category: .playback))
        #expect(item.sessionCategory == .playback)
        #expect(item.category == .playback)
        #expect(item.duckLevel == nil && item.ifBusy == nil && item.clip.extraDevices == nil)
        #expect(item.id == "0a0ad6c1de08" && item.sequence == 7 && item.priority == .high && item.tag == "backup")
        #expect(item.heardFrames == 24000 && item.totalFrames == 48000 && item.started && item.interrupted)

        // Saved again, it carries the session and no longer the old key, and reads back the same.
        let saved = try encoded(item)
        #expect(
            saved.contains(#""session":{"category":"playback""#) && !saved.contains(#""category":"playback","clip""#))
        #expect(try decode(QueueItem.self, saved) == item)
    }

    @Test func aSpoolEntryFromBeforeCategoriesHasTheDefaultSession() throws {
        let old = """
            {"arrival":5,"clip":{"gain":1,"loops":0,"pan":0,"path":"/a.wav"},"dropAfter":0.8,"heardFrames":0,\
            "id":"0123456789ab","interrupted":false,"interrupts":true,"onInterrupt":"resume","priority":"normal",\
            "sequence":0,"started":false}
            """
        let item = try decode(QueueItem.self, old)
        #expect(item.session == nil && item.audioSession == .default && item.sessionCategory == .soloAmbient)
    }

    @Test func anOldRequestWithOnlyACategoryDecodesIntoASession() throws {
        let old = #"{"clip":{"path":"/a.wav","gain":1,"pan":0,"loops":0},"priority":"high","category":"ambient"}"#
        let request = try decode(ItemRequest.self, old)
        #expect(request.session == AudioSession(category: .ambient) && request.priority == .high)
        // A refused category is still a malformed request.
        #expect(throws: DecodingError.self) {
            try decode(ItemRequest.self, #"{"clip":{"path":"/a.wav","gain":1,"pan":0,"loops":0},"category":"record"}"#)
        }
    }

    @Test func sessionWinsOverAnOldCategory() throws {
        let both =
            #"{"clip":{"path":"/a.wav","gain":1,"pan":0,"loops":0},"category":"ambient","session":{"category":"playback"}}"#
        #expect(try decode(ItemRequest.self, both).session?.category == .playback)
    }

    @Test func theWholeSessionRoundTrips() throws {
        let session = AudioSession(
            category: .multiRoute,
            options: SessionOptions(
                mixWithOthers: true, duckOthers: true,
                interruptSpokenAudioAndMixWithOthers: true,
                notifyOthersOnDeactivation: false),
            mode: .voicePrompt)
        let request = ItemRequest(
            clip: Clip(path: "/a.wav", device: "hw:0", extraDevices: ["hw:1", "hw:2"]),
            session: session, duckLevel: -20, ifBusy: .fail)
        let json = try encoded(request)
        #expect(
            json == """
                {"clip":{"device":"hw:0","extraDevices":["hw:1","hw:2"],"gain":1,"loops":0,"pan":0,"path":"/a.wav"},\
                "duckLevel":-20,"ifBusy":"fail","session":{"category":"multi-route","mode":"voice-prompt","options":\
                {"duckOthers":true,"interruptSpokenAudioAndMixWithOthers":true,"mixWithOthers":true,\
                "notifyOthersOnDeactivation":false}}}
                """)
        #expect(try decode(ItemRequest.self, json) == request)

        // The daemon turns the request into a spooled item carrying the same fields.
        let item = QueueItem(
            id: "a", clip: request.clip, arrival: 1, session: request.session,
            duckLevel: request.duckLevel, ifBusy: request.ifBusy)
        #expect(try decode(QueueItem.self, try encoded(item)) == item)
        #expect(item.audioSession == session)

        // Defaults are absent fields; a partial session fills in the rest.
        #expect(
            try encoded(ItemRequest(clip: Clip(path: "/a.wav")))
                == #"{"clip":{"gain":1,"loops":0,"pan":0,"path":"/a.wav"}}"#)
        let partial = try decode(
            ItemRequest.self,
            #"{"clip":{"path":"/a.wav","gain":1,"pan":0,"loops":0},"session":{"mode":"spoken-audio"}}"#)
        #expect(partial.session == AudioSession(mode: .spokenAudio))
        #expect(throws: DecodingError.self) {
            try decode(ItemRequest.self, #"{"clip":{"path":"/a.wav","gain":1,"pan":0,"loops":0},"ifBusy":"maybe"}"#)
        }
    }

    @Test func settingTheCategoryKeepsTheRestOfTheSession() {
        var request = ItemRequest(clip: Clip(path: "/a.wav"))
        request.category = nil
        #expect(request.session == nil)
        request.category = .playback
        #expect(request.session == AudioSession(category: .playback))
        request.session?.options.duckOthers = true
        request.category = .ambient
        #expect(request.session == AudioSession(category: .ambient, options: SessionOptions(duckOthers: true)))
        request.category = nil
        #expect(request.session?.category == .soloAmbient && request.session?.options.duckOthers == true)
    }

    @Test func clipDevices() {
        #expect(Clip(path: "/a.wav").devices(default: "default") == ["default"])
        #expect(Clip(path: "/a.wav", device: "hw:0").devices(default: "default") == ["hw:0"])
        #expect(
            Clip(path: "/a.wav", device: "hw:0", extraDevices: ["hw:1"]).devices(default: "default") == ["hw:0", "hw:1"]
        )
        #expect(Clip(path: "/a.wav", extraDevices: ["hw:1"]).devices(default: "null") == ["null", "hw:1"])
    }

    @Test func alertRequestAndRouteChange() throws {
        let request = Request.alert(
            AlertRequest(path: "/s/ding.wav", gain: 0.5, ignoreQuiet: true, device: "hw:0"), wait: true)
        let json = try encoded(request)
        #expect(
            json
                == #"{"alert":{"device":"hw:0","gain":0.5,"ignoreQuiet":true,"path":"/s/ding.wav"},"op":"alert","v":1,"wait":true}"#
        )
        #expect(try decode(Request.self, json) == request)
        #expect(
            try decode(Request.self, #"{"v":1,"op":"alert","alert":{"path":"/a.wav","gain":1}}"#)
                == .alert(AlertRequest(path: "/a.wav"), wait: false))

        let event = Event(time: 1, .routeChange(reason: .oldDeviceUnavailable, device: "hw:1"))
        let line = try encoded(event)
        #expect(line == #"{"device":"hw:1","event":"route-change","reason":"old-device-unavailable","time":1,"v":1}"#)
        guard case .event(let decoded) = try DaemonMessage.decode(Array(line.utf8)) else {
            Issue.record("not read as an event")
            return
        }
        #expect(decoded == event)
    }
}

/// What `announce alert` accepts, judged on what the decoder found.
@Suite struct SystemSoundTests {
    private func info(_ container: Container, _ codec: Codec, seconds: Double = 1) -> AudioFileInfo {
        AudioFileInfo(
            container: container, codec: codec, sampleRate: 48000, channels: 1,
            frames: Int64(seconds * 48000), exactSampleFormat: .int16)
    }

    @Test func linearPCMInWAVCAFAIFFPasses() {
        for (container, codec) in [
            (Container.wav, Codec.pcm(bits: 16)), (.wavExtensible, .pcm(bits: 24)), (.rf64, .pcm(bits: 16)),
            (.caf, .pcm(bits: 16)), (.aiff, .pcm(bits: 8)), (.aifc, .float(bits: 32)),
            (.wav, .float(bits: 64)), (.rifx, .pcm(bits: 8, unsigned: true))
        ] {
            #expect(SystemSound.refusal(of: info(container, codec), path: "a") == nil, "\(container) \(codec)")
        }
        #expect(SystemSound.refusal(of: info(.wav, .pcm(bits: 16), seconds: 30), path: "a") == nil)
    }

    @Test func otherFormatsAreRefusedNamingWhatTheyAre() {
        let mp3 = Codec.mpeg(MPEGAudio(version: "1", layer: 3, bitrate: .constant(kbps: 128)))
        let cases = [
            (info(.flac, .flac(bits: 16)), "FLAC"), (info(.mp3, mp3), "MP3"),
            (info(.ogg, .vorbis), "Ogg Vorbis"), (info(.wav, .imaADPCM), "IMA ADPCM in WAV"),
            (info(.wav, .muLaw), "mu-law in WAV"), (info(.caf, .alac(bits: 16)), "ALAC 16-bit in CAF"),
            (info(.wave64, .pcm(bits: 16)), "Wave64"), (info(.ogg, .flac(bits: 24)), "Ogg FLAC 24-bit")
        ]
        for (info, kind) in cases {
            #expect(
                SystemSound.refusal(of: info, path: "x.snd")
                    == .undecodable(
                        path: "x.snd", reason: "alerts play PCM WAV, CAF or AIFF; this is \(kind) (use announce play)"))
        }
    }

    /// `announce info` prints these names: they are the ones it always printed.
    @Test func formatNamesAreTheOnesInfoPrints() {
        #expect(
            [Container.wav, .wavExtensible, .rifx, .nistSphere, .svx8, .psionWVE, .other("libsndfile format 0x99")].map(
                \.name)
                == [
                    "WAV", "WAV (extensible)", "WAV (RIFX)", "NIST SPHERE", "8SVX", "Psion WVE",
                    "libsndfile format 0x99"
                ])
        let codecs: [Codec] = [
            .pcm(bits: 8, unsigned: true), .float(bits: 64), .flac(bits: nil), .flac(bits: 24), .alac(bits: 20),
            .mpeg(nil), .mpeg(MPEGAudio(version: "1", layer: 3, bitrate: .constant(kbps: 128))),
            .mpeg(MPEGAudio(version: "2.5", layer: 2, bitrate: .variable)),
            .mpeg(MPEGAudio(version: "2", layer: 1, bitrate: .average)), .muLaw, .gsm610, .g723ADPCM
        ]
        #expect(
            codecs.map(\.name) == [
                "PCM 8-bit unsigned", "float 64-bit", "FLAC", "FLAC 24-bit", "ALAC 20-bit", "MPEG audio",
                "MPEG-1 Layer III 128 kbit/s CBR", "MPEG-2.5 Layer II VBR", "MPEG-2 Layer I ABR",
                "mu-law", "GSM 6.10", "G.723 ADPCM"
            ])
    }

    @Test func longerThan30SecondsIsRefused() {
        #expect(
            SystemSound.refusal(of: info(.wav, .pcm(bits: 16), seconds: 31.2), path: "long.wav")?.description
                == "long.wav: 31.2 s is longer than an alert's 30 s (use announce play)")
        // Never "30.0 s is longer than 30 s".
        #expect(
            SystemSound.refusal(of: info(.wav, .pcm(bits: 16), seconds: 30.01), path: "a")?.description
                == "a: 30.01 s is longer than an alert's 30 s (use announce play)")
        var unknown = info(.wav, .pcm(bits: 16))
        unknown.frames = nil
        #expect(SystemSound.refusal(of: unknown, path: "a")?.exitCode == 65)
    }
}
