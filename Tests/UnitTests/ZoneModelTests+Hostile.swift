import AnnounceModel
import FoundationEssentials
import Testing

/// What a message from another machine may not do to a host: trap it with absurd times, name
/// its files through a voice, or fill its disk with records of plays seen.
extension ZoneModelTests {
    /// The message a reviewer found: `sent` far in the past makes the wait at the broker ~1e19 s,
    /// which trapped the daemon where it turned that into an Int for its log.
    @Test func anAbsurdSendingTimeIsRefusedAndTheWaitAtTheBrokerIsBounded() throws {
        let message =
            #"{"v":1,"id":"\#(String(repeating: "ef", count: 16))","from":"desk","sent":-1e19,"items":[{"item":{"clip":{"path":"x.wav","gain":1,"pan":0,"loops":0},"at":1,"expire":1},"audio":"AAAA"}]}"#
        guard case .failure(let refusal) = RemotePlay.decode(Array(message.utf8)) else {
            Issue.record("sent -1e19 was taken")
            return
        }
        #expect(
            refusal.id == PlayID(String(repeating: "ef", count: 16)) && refusal.reason.hasPrefix("sent must be 0 to"),
            "\(refusal)")
        for sent in [-1.0, Limits.latestTime + 1, 1e300, -.infinity] {
            let play = RemotePlay(
                id: PlayID(String(repeating: "ab", count: 16)), from: "d", sent: sent,
                items: [RemoteItem(item: ItemRequest(clip: Clip(path: "x")), bytes: [1])])
            #expect(play.problem?.hasPrefix("sent must be") == true, "sent \(sent)")
        }

        // Whatever the broker says is left of the expiry, the wait is 0 to the play's expiry.
        var item = ItemRequest(clip: Clip(path: "x"))
        item.expire = 10
        let play = RemotePlay(
            id: PlayID(String(repeating: "ab", count: 16)), from: "d", sent: 1000,
            items: [RemoteItem(item: item, bytes: [1])])
        #expect(play.waitedAtBroker(expiryLeft: 4) == 6)
        #expect(play.waitedAtBroker(expiryLeft: nil) == 0)
        #expect(play.waitedAtBroker(expiryLeft: 1e12) == 0)
        #expect(play.waitedAtBroker(expiryLeft: -1e19) == 10)
        #expect(play.waitedAtBroker(expiryLeft: .nan) == 0)
        var forever = play
        forever.items[0].item.expire = nil
        #expect(forever.waitedAtBroker(expiryLeft: 3) == 0)
    }

    /// piper loads any `X.onnx` named with a `/`, flite's `-voice` takes a path or a URL, espeak-ng
    /// reads voice files: from another host a voice (or language) is a name only.
    @Test func aVoiceFromAnotherHostIsANameNeverAPathOrURL() {
        func speech(voice: String? = nil, language: String? = nil, engine: SpeechEngine = .piper) -> RemotePlay {
            RemotePlay(
                id: PlayID(String(repeating: "ab", count: 16)), from: "desk", sent: 1000,
                items: [
                    RemoteItem(
                        item: ItemRequest(
                            clip: Clip(
                                path: "say",
                                speech: Speech(text: "hi", engine: engine, voice: voice, language: language))))
                ])
        }
        for voice in ["en_US-lessac-medium", "en-us+f3", "kal", "mb-de4"] {
            #expect(speech(voice: voice).problem == nil, "\(voice)")
        }
        for voice in ["/home/u/evil", "../../tmp/x", "voices/x", ".hidden", "http://h/v.flitevox", "c:x", #"a\b"#] {
            let problem = speech(voice: voice, engine: .flite).problem ?? ""
            #expect(
                problem.hasPrefix("items[0]: speech.voice: ")
                    && problem.hasSuffix("is a path or URL, not a voice name"), "\(voice): \(problem)")
        }
        #expect(speech(language: "../en", engine: .espeakNG).problem?.hasPrefix("items[0]: speech.lang: ") == true)
        // The same voice given on this host is the user's own choice: a path is theirs to name.
        #expect(Speech(text: "hi", engine: .piper, voice: "/home/u/voices/x").problem == nil)
    }

    /// espeak-ng plays an SSML <audio src> itself: a file read with the daemon's rights, from
    /// whoever sent the text (another user on the system queue, another host).
    @Test func ssmlNamesNoFileToRead() {
        for text in [#"<speak>a<audio src="/etc/shadow"/>b</speak>"#, "<speak>< AUDIO src='x.wav'></AUDIO></speak>"] {
            let problem = Speech(text: text, ssml: true).problem
            #expect(problem == "speech.text: SSML <audio> is not spoken; play the file with announce play", "\(text)")
        }
        #expect(Speech(text: "<speak>audio <break time='1s'/> and <audiophile/></speak>", ssml: true).problem == nil)
        #expect(Speech(text: "plain <audio> words", ssml: nil).problem == nil, "plain text is spoken, not parsed")
    }

    @Test func aHostForgetsExpiredPlayRecordsAndKeepsAtMostTheLimit() {
        typealias Entry = SeenRecords.Entry
        let entries = [
            Entry(name: "a", expires: 50, pending: false), Entry(name: "b", expires: 200, pending: false),
            Entry(name: "c", expires: 150, pending: true), Entry(name: "d", expires: 300, pending: false)
        ]
        #expect(SeenRecords.toForget(entries, now: 100, limit: 10) == ["a"])
        // Over the limit (3 kept > 2): the soonest to expire go until a tenth of the room is free,
        // but not a play still waiting for its outcome.
        #expect(SeenRecords.toForget(entries, now: 100, limit: 2) == ["a", "b", "d"])
        let many = (0..<1000).map { Entry(name: PlayID(String($0)), expires: 1000 + Double($0), pending: $0 % 20 == 0) }
        let forgotten = Set(SeenRecords.toForget(many, now: 0, limit: 100))
        #expect(
            many.count - forgotten.count == 90 && many.filter(\.pending).allSatisfy { !forgotten.contains($0.name) })
    }
}
