import AnnounceModel
import FoundationEssentials
import Testing

/// Zones' pure parts: the topic layout, names, the `[mqtt]` section, and what a host takes
/// from a play message (docs/ZONES.md).
@Suite struct ZoneModelTests {
    @Test func topicsRoundTripAndNothingElseParses() {
        let topics: [ZoneTopic] = [
            .hostPlay("kitchen"), .zonePlay("downstairs"), .zonePlay("all"),
            .result(request: PlayID(String(repeating: "0a", count: 8)), host: "garage"), .status("pi-4.lan"),
            .hostSay("kitchen"), .zoneSay("all"), .hostCancel("k"), .zoneCancel("z")
        ]
        for topic in topics { #expect(ZoneTopic(topic.name) == topic, "\(topic.name)") }
        #expect(ZoneTopic.hostPlay("kitchen").name == "announce/v1/host/kitchen/play")
        #expect(ZoneTopic.result(request: "ab", host: "h").name == "announce/v1/result/ab/h")
        for name in [
            "announce/v1/host/kitchen", "announce/v2/host/kitchen/play", "announce/v1/host/+/play",
            "announce/v1/zone/a b/play", "announce/v1/result/xyz/h", "announce/v1/status/h/extra", "other/v1/status/h",
            "announce/v1/host//play", ""
        ] {
            #expect(ZoneTopic(name) == nil, "\(name)")
        }
    }

    @Test func namesAreOneTopicLevelOfPlainCharacters() {
        for name in ["kitchen", "Pi-4", "a.b_c", String(repeating: "x", count: 64)] {
            #expect(ZoneName.problem(name, kind: "host") == nil, "\(name)")
        }
        for name in ["", "-x", "a/b", "a+b", "#", "kü", "a b", String(repeating: "x", count: 65)] {
            #expect(ZoneName.problem(name, kind: "host") != nil, "\(name)")
        }
    }

    @Test func theMQTTSectionGivesTheBrokerAndItsKeys() {
        let (set, none) = UserConfiguration.parse(
            """
            [mqtt]
            host = kitchen
            zones = downstairs, kitchen, downstairs
            broker = mqtts://broker.lan
            username = k
            password-file = ~/.config/announce/mqtt-password
            ca-file = /etc/ca.pem
            """, name: "c")
        #expect(none.isEmpty, "\(none)")
        let mqtt = set.mqtt
        #expect(mqtt?.broker == MQTTSettings.Broker(parsing: "mqtts://broker.lan:8883"))
        #expect(mqtt?.broker.tls == true && mqtt?.broker.port == 8883 && mqtt?.host == "kitchen")
        #expect(mqtt?.zones == ["downstairs", "kitchen"] && mqtt?.username == "k" && mqtt?.caFile == "/etc/ca.pem")
        #expect(MQTTSettings.Broker(parsing: "mqtt://127.0.0.1:1884")?.port == 1884)
        #expect(MQTTSettings.Broker(parsing: "mqtt://[::1]:1884")?.host == "::1")
        #expect(MQTTSettings.Broker(parsing: "mqtt://h")?.description == "mqtt://h:1883")
        for bad in ["http://h", "mqtt://", "mqtt://h:0", "mqtt://h:x", "mqtt://u@h", "mqtt://h/path", "mqtt://[::1"] {
            #expect(MQTTSettings.Broker(parsing: bad) == nil, "\(bad)")
        }
        #expect(UserConfiguration.parse("device = x\n", name: "c").configuration.mqtt == nil)
    }

    @Test func aBadMQTTSectionWarnsNamingTheKeyAndLeavesZonesOff() {
        let (noBroker, warnings) = UserConfiguration.parse("[mqtt]\nhost = a/b\nzones = x\n", name: "c")
        #expect(noBroker.mqtt == nil)
        #expect(
            warnings == [
                "c:2: host: host name 'a/b' may have only letters, digits, '.', '_' and '-' (and starts with a letter or digit)",
                "c:1: [mqtt] has no broker: zones are off"
            ])
        let (halfTLS, more) = UserConfiguration.parse(
            "[mqtt]\nbroker = mqtts://b\ncert-file = /c.pem\ncolour = red\nca-file = ca.pem\n", name: "c")
        #expect(halfTLS.mqtt == nil)
        #expect(
            more == [
                "c:4: unknown key 'colour' in [mqtt] (known: broker, host, zones, username, password, password-file, ca-file, cert-file, key-file, discovery)",
                "c:5: ca-file must be an absolute path, not 'ca.pem'",
                "c:1: [mqtt] cert-file and key-file go together: zones are off"
            ])
    }

    private func play(_ items: [RemoteItem], id: PlayID = PlayID(String(repeating: "ab", count: 16))) -> RemotePlay {
        RemotePlay(id: id, from: "desk", sent: 1000, items: items)
    }

    private func audio(_ configure: (inout ItemRequest) -> Void = { _ in }) -> RemoteItem {
        var item = ItemRequest(clip: Clip(path: "bell.wav"))
        configure(&item)
        return RemoteItem(item: item, bytes: [1, 2, 3])
    }

    @Test func aHostTakesAudioURLsSpeechAndStreamsButNothingOfTheSendersMachine() {
        #expect(play([audio()]).problem == nil)
        #expect(
            play([
                RemoteItem(
                    item: ItemRequest(
                        clip: {
                            var c = Clip(path: "https://h/x.mp3")
                            c.url = c.path
                            return c
                        }()))
            ]).problem == nil)
        #expect(
            play([RemoteItem(item: ItemRequest(clip: Clip(path: "say", speech: Speech(text: "hi", engine: .espeakNG))))]
            ).problem == nil)
        let refused: [(RemoteItem, String)] = [
            (audio { $0.clip.device = "hw:0" }, "clip.device"),
            (audio { $0.clip.environment = ["PULSE_SERVER": "x"] }, "clip.environment"),
            (audio { $0.clip.media = "abc" }, "clip.media"),
            (audio { $0.clip.pathBytes = FileName("/etc/passwd") }, "clip.media"),
            (RemoteItem(item: ItemRequest(clip: Clip(path: "/etc/passwd"))), "needs exactly one of"),
            (
                RemoteItem(
                    item: ItemRequest(
                        clip: {
                            var c = Clip(path: "file:///etc/x.wav")
                            c.url = c.path
                            return c
                        }())), "file://"
            ),
            (audio { $0.clip.gain = 99 }, "gain must be"),
            (
                audio {
                    $0.priority = nil
                    $0.expire = -1
                }, "expire must be"
            ),
            (RemoteItem(item: ItemRequest(clip: Clip(path: "x")), audio: Data()), "audio is empty"),
            // A chime travels as its bytes: a path would have this host read a file of its own.
            (audio { $0.clip.chime = "/etc/shadow" }, "clip.chime"),
            (audio { $0.clip.chimeAfter = "/home/u/.ssh/id_rsa" }, "clip.chime"),
            (RemoteItem(item: ItemRequest(clip: Clip(path: "x")), bytes: [1], chime: []), "chime is empty")
        ]
        for (item, expected) in refused {
            let problem = play([item]).problem ?? ""
            #expect(problem.hasPrefix("items[0]: ") && problem.contains(expected), "\(problem) for \(expected)")
        }
        #expect(play([]).problem == "a play needs at least one item")
        #expect(
            play([
                RemoteItem(
                    item: ItemRequest(clip: Clip(path: "big")),
                    bytes: [UInt8](repeating: 0, count: ZoneLimits.maxAudioBytes + 1))
            ]).problem?
            .hasPrefix("audio of") == true)
        let half = [UInt8](repeating: 0, count: ZoneLimits.maxAudioBytes / 2 + 1)
        #expect(
            play([RemoteItem(item: ItemRequest(clip: Clip(path: "big")), bytes: half, chime: half)]).problem?.hasPrefix(
                "audio of") == true,
            "a chime counts in the message's audio")
        let chimed = RemoteItem(item: ItemRequest(clip: Clip(path: "x")), bytes: [1], chime: [2], chimeAfter: [3])
        #expect(play([chimed]).problem == nil)
        let local = chimed.local(media: "m", chime: "/run/a/media/c1", chimeAfter: "/run/a/media/c2")
        #expect(
            local.clip.media == "m" && local.clip.chime == "/run/a/media/c1"
                && local.clip.chimeAfter == "/run/a/media/c2")
    }

    @Test func aMessageDecodesOnlyWhenItIsAPlayWithAnID() throws {
        let good = play([audio()])
        #expect(try RemotePlay.decode(JSONCoding.encode(good, orElse: "")).get() == good)
        #expect(
            RemotePlay.decode(Array("not json".utf8))
                == .failure(ZoneRefusal(id: nil, reason: "malformed play: not valid JSON")))
        if case .failure(let refusal) = RemotePlay.decode(
            Array(#"{"v":1,"id":"XYZ","from":"d","sent":1,"items":[]}"#.utf8))
        {
            #expect(refusal.id == nil && refusal.reason.contains("id must be"))
        } else {
            Issue.record("an invalid id decoded")
        }
        // A bad value with a good id is answered: the refusal keeps the id.
        var bad = good
        bad.items[0].item.clip.gain = -1
        if case .failure(let refusal) = RemotePlay.decode(JSONCoding.encode(bad, orElse: "")) {
            #expect(refusal.id == good.id && refusal.reason.contains("gain"))
        } else {
            Issue.record("a bad gain decoded")
        }
        if case .failure(let refusal) = RemotePlay.decode([UInt8](repeating: 32, count: ZoneLimits.maxMessageBytes + 1))
        {
            #expect(refusal.reason.contains("is over"))
        } else {
            Issue.record("an oversized message decoded")
        }
    }

    @Test func theBrokerExpiresAPlayWhenItsLastItemWould() {
        #expect(play([audio()]).expiry == nil)
        #expect(play([audio { $0.expire = 10 }]).expiry == 10)
        #expect(
            play([
                audio {
                    $0.expire = 10
                    $0.delay = 5
                }, audio { $0.expire = 3 }
            ]).expiry == 15)
        #expect(
            play([
                audio {
                    $0.expire = 10
                    $0.at = 1060
                }
            ]).expiry == 70)
        #expect(play([audio { $0.expire = 10 }, audio()]).expiry == nil)
    }

    @Test func aStatusChangesOnlyWithItsState() {
        let now = HostStatus(host: "k", zones: ["a"], state: .online, queued: 1, quiet: false, paused: false, time: 1)
        var later = now
        later.time = 5
        #expect(now.sameState(as: later))
        later.queued = 2
        #expect(!now.sameState(as: later))
    }

    @Test func aNewPlayIDIsWellFormedAndOthersAreNot() {
        let id = PlayID.random()
        #expect(id.isWellFormed && id.rawValue.count == 32 && id != PlayID.random())
        let bad: [PlayID] = [
            "", "0123456789abcde", PlayID(String(repeating: "a", count: 65)), "0123456789ABCDEF", "0123456789abcdeg",
            "../../etc/passwd0"
        ]
        for id in bad { #expect(!id.isWellFormed, "\(id)") }
        #expect(PlayID(String(repeating: "f", count: 64)).isWellFormed)
    }
}

extension ZoneModelTests {
    @Test func theTimeAtTheBrokerCountsAgainstDelaysAndExpiries() {
        var item = ItemRequest(clip: Clip(path: "x"))
        item.expire = 10
        var delayed = item
        delayed.delay = 5
        var timed = item
        timed.at = 2000
        var play = RemotePlay(
            id: PlayID(String(repeating: "ab", count: 16)), from: "d", sent: 1000,
            items: [
                RemoteItem(item: item, bytes: [1]), RemoteItem(item: delayed, bytes: [1]),
                RemoteItem(item: timed, bytes: [1]), RemoteItem(item: ItemRequest(clip: Clip(path: "y")), bytes: [1])
            ])
        var later = play
        play.age(by: 7)
        #expect(play.items.map(\.item.expire) == [3, 8, 10, nil])
        #expect(play.items.map(\.item.delay) == [nil, 0, nil, nil])
        #expect(play.items.map(\.item.at) == [nil, nil, 2000, nil])
        // Due at 2000 (1000 s after sending): waiting longer makes it due now, its expiry counted from 2000.
        later.age(by: 1004)
        #expect(later.items.map(\.item.expire) == [0, 0, 6, nil])
        #expect(later.items.map(\.item.at) == [nil, nil, nil, nil])
        // A zone's common start time passed while the play waited: its expiry counts from that time.
        var together = RemotePlay(id: play.id, from: "d", sent: 1000, items: [RemoteItem(item: item, bytes: [1])])
        together.startTogether()
        together.age(by: 1)
        #expect(
            together.items[0].item.at == nil
                && abs((together.items[0].item.expire ?? 0) - (10 - (1 - ZoneLimits.startLead))) < 1e-6)
    }
}

extension ZoneModelTests {
    @Test func aZoneStartsItsQueuedItemsTogether() {
        func item(_ configure: (inout ItemRequest) -> Void = { _ in }) -> RemoteItem {
            var request = ItemRequest(clip: Clip(path: "x"))
            configure(&request)
            return RemoteItem(item: request, bytes: [1])
        }
        var play = RemotePlay(
            id: PlayID(String(repeating: "ab", count: 16)), from: "d", sent: 1000,
            items: [
                item(), item { $0.at = 5000 }, item { $0.delay = 10 },
                item { $0.session = AudioSession(category: .ambient) }
            ])
        play.startTogether()
        #expect(play.items.map(\.item.at) == [1000 + ZoneLimits.startLead, 5000, nil, nil])
        #expect(play.problem == nil)
    }
}

extension ZoneModelTests {
    @Test func homeAssistantFindsTheHostAndItsZonesAsNotifyEntities() throws {
        let entities = HomeAssistant.entities(host: "Pi-4", zones: ["down.stairs"])
        #expect(
            entities.map(\.topic) == [
                "homeassistant/notify/announce_pi_4/config", "homeassistant/notify/announce_zone_down_stairs/config",
                "homeassistant/notify/announce_zone_all/config"
            ])
        #expect(
            entities.map(\.commandTopic) == [
                "announce/v1/host/Pi-4/say", "announce/v1/zone/down.stairs/say", "announce/v1/zone/all/say"
            ])
        let json = String(decoding: JSONCoding.encode(entities[0], orElse: ""), as: UTF8.self)
        #expect(
            json.contains(#""availability_topic":"announce/v1/status/Pi-4""#) && json.contains(#""qos":0"#)
                && json.contains(#""unique_id":"announce_pi_4""#), "\(json)")
        #expect(
            UserConfiguration.parse("[mqtt]\nbroker = mqtt://b\ndiscovery = no\n", name: "c").configuration.mqtt?
                .discovery == false)
    }

    @Test func aSayTopicTakesUTF8TextOnly() throws {
        #expect(try HomeAssistant.text(Array("Dinner is ready".utf8)).get() == "Dinner is ready")
        for bad in [
            [0xff, 0xfe], Array("a\u{0}b".utf8), Array("  \n".utf8),
            [UInt8](repeating: 65, count: Limits.maxSpeechBytes + 1)
        ] {
            if case .success = HomeAssistant.text(bad) { Issue.record("\(bad.prefix(8)) was taken") }
        }
    }
}

extension ZoneModelTests {
    @Test func aCancelNamesAPlayAndItsSender() {
        let cancel = RemoteCancel(id: PlayID(String(repeating: "ab", count: 16)), from: "desk")
        #expect(RemoteCancel.decode(JSONCoding.encode(cancel, orElse: "")) == cancel)
        for bad in [
            #"{"v":1,"id":"xyz","from":"desk"}"#, #"{"v":2,"id":"\#(cancel.id)","from":"desk"}"#,
            #"{"v":1,"id":"\#(cancel.id)","from":"a/b"}"#, "garbage"
        ] {
            #expect(RemoteCancel.decode(Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
