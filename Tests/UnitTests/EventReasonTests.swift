import Foundation
import Testing

@testable import AnnounceModel

/// `reason` is typed, and the wire keeps the strings docs/protocol.md lists (Events).
@Suite struct EventReasonTests {
    /// Every documented reason, as the wire spells it, and what it decodes to.
    static let documented: [(String, EventReason)] = [
        ("queued", .queued), ("scheduled", .scheduled), ("paused", .paused), ("held", .held),
        ("device-busy", .deviceBusy), ("device-lost", .deviceLost), ("call", .call),
        ("other audio playing", .otherAudioPlaying),
        ("preempted by 0a0ad6c1de08", .preempted(by: "0a0ad6c1de08")),
        ("non-mixable-activation", .nonMixableActivation), ("spoken-audio-interrupted", .spokenAudioInterrupted),
        ("waiting for announce resume", .awaitingResume),
        ("interrupted by 0a0ad6c1de08", .interruptedBy("0a0ad6c1de08")),
        ("old-device-unavailable", .oldDeviceUnavailable), ("new-device-available", .newDeviceAvailable),
        ("quiet mode", .other("quiet mode")), ("replaced by 0a0ad6c1de08", .other("replaced by 0a0ad6c1de08"))
    ]

    @Test func theWireStringsDecodeTypedAndEncodeTheSameBytes() throws {
        for (text, reason) in Self.documented {
            let line = #"{"v":1,"event":"interruption-began","time":5,"id":"a","reason":"\#(text)"}"#
            let event = try JSONCoding.decode(Event.self, from: Array(line.utf8))
            #expect(event.reason == reason, "\(text)")
            let written = try #require(
                JSONSerialization.jsonObject(with: Data(JSONCoding.encode(event, orElse: ""))) as? [String: Any])
            #expect(written["reason"] as? String == text)
        }
    }

    @Test func aNewerDaemonsReasonStillDecodes() throws {
        let line = #"{"v":1,"event":"waiting","time":5,"id":"a","reason":"tea-break","warning":"w"}"#
        let event = try JSONCoding.decode(Event.self, from: Array(line.utf8))
        #expect(event.reason == .other("tea-break") && event.warning == "w")
        #expect(EventReason("preempted by ") == .other("preempted by "))  // no id: not one of ours
    }

    @Test func holdsAreToldInTheirOrder() {
        // The device first, then a session's interruption, then a --no-notify-others pause.
        let holds: Set<QueueHold> = [
            .awaitingResume, .interruptedBy("b"), .deviceLost, .interruptedBy("a"), .deviceBusy
        ]
        #expect(
            holds.sorted().map(\.description)
                == ["device-busy", "device-lost", "interrupted by a", "interrupted by b", "waiting for announce resume"]
        )
        #expect(holds.min() == .deviceBusy)
    }

    @Test func statusHoldsAreTheWireStrings() throws {
        var status = DaemonStatus(
            pid: 1, device: UserConfiguration.defaultDevice, deviceOpen: false, paused: false,
            playing: nil, queued: [], scheduled: [])
        status.holds = [QueueHold.deviceBusy.reason, QueueHold.interruptedBy("a").reason]
        let written = try #require(
            JSONSerialization.jsonObject(with: Data(JSONCoding.encode(status, orElse: ""))) as? [String: Any])
        #expect(written["holds"] as? [String] == ["device-busy", "interrupted by a"])
        #expect(written["device"] as? String == "default")
    }

    @Test func aBusyWarningNamesItsHoldersBothWays() {
        let warning = BusyWarning.text(holders: "held by pid 4242 (other-player)")
        #expect(warning == "busy, held by pid 4242 (other-player)")
        #expect(BusyWarning.holders(of: warning) == "held by pid 4242 (other-player)")
        #expect(BusyWarning.text(holders: nil) == "busy: another program is using it")
        #expect(BusyWarning.holders(of: "busy: another program is using it") == "busy: another program is using it")
    }
}
