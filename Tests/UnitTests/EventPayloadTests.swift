import Foundation
import Testing

@testable import AnnounceModel

/// Each kind of event carries its own fields (`Event.Payload`) and is sent as the one flat
/// object docs/protocol.md documents. Keys are read with Foundation's JSONSerialization.
@Suite struct EventPayloadTests {
    static let item = EventItem("0a0ad6c1de08", path: "/s/a.wav", priority: .high)
    static let every: [(Event.Payload, Set<String>)] = [
        (.queued(item), ["id", "path", "priority"]),
        (
            .started(item, heard: 0, duration: 2, device: "hw:0", format: "S16_LE 48000 Hz 2 ch"),
            ["id", "path", "priority", "heard", "duration", "device", "format"]
        ),
        (
            .progress(EventItem("0a0ad6c1de08"), heard: 1, duration: 2, percent: 50),
            ["id", "heard", "duration", "percent"]
        ),
        (
            .interruptionBegan(item, reason: .call, heard: 1, warning: "a call"),
            ["id", "path", "priority", "reason", "heard", "warning"]
        ),
        (.interruptionEnded(item, shouldResume: false), ["id", "path", "priority", "shouldResume"]),
        (
            .finished(item, outcome: Outcome(.played), heard: 2, duration: 2, device: "hw:0", frames: 96000),
            ["id", "path", "priority", "outcome", "heard", "duration", "device", "frames"]
        ),
        (.waiting(item, reason: .queued, ahead: 2, wait: 3.5), ["id", "path", "priority", "reason", "ahead", "wait"]),
        (.title(item, title: "News"), ["id", "path", "priority", "title"]),
        (.deviceOpened(device: "pulse", format: "S16_LE 48000 Hz 2 ch"), ["device", "format"]),
        (.deviceClosed(device: "pulse"), ["device"]),
        (.routeChange(reason: .newDeviceAvailable, device: "hw:1"), ["reason", "device"]),
        (.quiet(reason: .other("quiet mode"), quiet: true, state: .on), ["reason", "quiet", "state"]),
        (.paused, []), (.resumed, [])
    ]

    @Test func eachKindIsItsOwnFieldsOnTheWire() throws {
        #expect(Set(Self.every.map { Event(time: 1, $0.0).kind }) == Set(EventKind.allCases))
        for (payload, fields) in Self.every {
            let event = Event(time: 1, payload)
            let bytes = try #require(JSONCoding.encode(event))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            #expect(Set(object.keys) == fields.union(["v", "event", "time"]), "\(event.kind)")
            #expect(object["event"] as? String == event.kind.rawValue)
            #expect(try JSONCoding.decode(Event.self, from: bytes) == event, "\(event.kind)")
        }
    }

    @Test func anEventWithoutAFieldItsKindNeedsIsRefused() {
        for line in [
            #"{"v":1,"event":"finished","time":1,"outcome":{"kind":"played"}}"#,
            #"{"v":1,"event":"finished","time":1,"id":"a"}"#,
            #"{"v":1,"event":"device-closed","time":1}"#,
            #"{"v":1,"event":"interruption-ended","time":1,"id":"a"}"#,
            #"{"v":1,"event":"route-change","time":1,"device":"hw:0"}"#
        ] {
            #expect(throws: DecodingError.self, "\(line)") { try JSONCoding.decode(Event.self, from: Array(line.utf8)) }
        }
    }

    /// What another user is sent of any event about an item decodes again, without the words.
    @Test func anotherUsersViewOfEveryKindDecodes() throws {
        let owned = EventItem("0a0ad6c1de08", path: "/home/bob/x.wav", owner: ItemOwner(uid: 7, name: "bob"))
        let payloads: [Event.Payload] = [
            .interruptionBegan(owned, reason: .other("skipped"), warning: "/home/bob"),
            .waiting(owned, reason: .other("tea-break"), warning: "/home/bob"),
            .finished(owned, outcome: Outcome(.failed, reason: "/home/bob/x.wav: gone", code: 66), reason: .other("x")),
            .started(owned, device: "file:FILE=/home/bob/out.wav", format: "S16_LE 48000 Hz 1 ch"),
            .title(owned, title: "bob's radio")
        ]
        for payload in payloads {
            let view = Event(time: 1, payload).privateView()
            let read = try JSONCoding.decode(Event.self, from: try #require(JSONCoding.encode(view)))
            #expect(read.path == "(another user's)" && read.owner?.uid == 7, "\(view.event)")
            #expect(read.reason == nil && read.warning == nil && read.device == nil && read.title == nil)
        }
    }

    @Test func readingAFieldReadsTheObject() {
        let event = Event(time: 1, .finished(Self.item, outcome: Outcome(.played), heard: 2))
        #expect(event.id == "0a0ad6c1de08" && event.heard == 2 && event.path == "/s/a.wav")
        #expect(event.device == nil && event.percent == nil && event.event == .finished)
        #expect(event.owned(by: ItemOwner(uid: 7, name: "bob")).owner == ItemOwner(uid: 7, name: "bob"))
        #expect(Event(time: 1, .paused).owned(by: ItemOwner(uid: 7, name: "bob")).owner == nil)
    }
}
