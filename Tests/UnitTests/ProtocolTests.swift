import Foundation
import Testing

@testable import AnnounceModel

/// The typed messages on the wire (docs/protocol.md): each request and reply round-trips, the
/// bytes are the ones version 1 has always carried, the documented lines decode, and a bad
/// line gets the error reply it always got. Text is checked with Foundation's JSONSerialization,
/// not with our own coding.
@Suite struct ProtocolTests {
    /// The line a request or reply is sent as, without its newline.
    private func line(_ message: some Encodable) -> String {
        String(decoding: WireProtocol.encode(message).dropLast(), as: UTF8.self)
    }

    /// The JSON object a text holds, as the reference parser reads it.
    private func object(_ text: String) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary, "\(text)")
    }

    private func request(_ text: String) throws(AnnounceError) -> Request {
        try Request(line: Array(text.utf8))
    }

    private func refusal(_ text: String) -> String? {
        do {
            _ = try request(text)
            return nil
        } catch {
            #expect(error.exitCode == 64, "\(text)")
            return error.description
        }
    }

    static let item = ItemRequest(
        clip: Clip(
            path: "/abs/file.mp3", device: "plughw:0", extraDevices: ["plughw:1"], gain: 1, pan: 0, loops: 0,
            start: 1.5,
            environment: ["PULSE_SERVER": "unix:/run/user/1000/pulse/native"], seconds: 3),
        priority: .high, interrupts: true, onInterrupt: .resume, dropAfter: 0.8, tag: "backup", replace: true,
        at: 1_795_000_000, delay: 30, expire: 600,
        session: AudioSession(category: .multiRoute, options: SessionOptions(duckOthers: true), mode: .voicePrompt),
        duckLevel: -20, ifBusy: .fail)

    /// Every request, each as the version-1 client wrote it (keys sorted; `wait` and `progress` always
    /// written where the op takes them).
    static let requests: [(Request, String)] = [
        (
            .play(items: [ItemRequest(clip: Clip(path: "/tmp/a.wav"))], wait: true),
            #"{"items":[{"clip":{"gain":1,"loops":0,"pan":0,"path":"/tmp/a.wav"}}],"op":"play","progress":false,"v":1,"wait":true}"#
        ),
        (
            .alert(AlertRequest(path: "/s/ding.wav", gain: 0.5, ignoreQuiet: true), wait: false),
            #"{"alert":{"gain":0.5,"ignoreQuiet":true,"path":"/s/ding.wav"},"op":"alert","v":1,"wait":false}"#
        ),
        (.wait(ids: ["0a0ad6c1de08"], progress: true), #"{"ids":["0a0ad6c1de08"],"op":"wait","progress":true,"v":1}"#),
        (.status, #"{"op":"status","v":1}"#),
        (.skip, #"{"op":"skip","v":1}"#),
        (.pause, #"{"op":"pause","v":1}"#),
        (.resume, #"{"op":"resume","v":1}"#),
        (.stop, #"{"op":"stop","v":1}"#),
        (.clear, #"{"op":"clear","v":1}"#),
        (.cancel(.ids(["0a0ad6c1de08", "0b"])), #"{"ids":["0a0ad6c1de08","0b"],"op":"cancel","v":1}"#),
        (.cancel(.tag("backup")), #"{"op":"cancel","tag":"backup","v":1}"#),
        (.events, #"{"op":"events","v":1}"#),
        (.quiet(.on), #"{"op":"quiet","state":"on","v":1}"#),
        (.quiet(.off), #"{"op":"quiet","state":"off","v":1}"#),
        (.quiet(.until(1_795_030_000)), #"{"op":"quiet","state":"until","until":1795030000,"v":1}"#)
    ]

    @Test func everyRequestIsTheLineVersionOneSentAndReadsBack() throws {
        for (request, expected) in Self.requests {
            let sent = line(request)
            #expect(sent == expected)
            #expect(try object(sent) == object(expected), "\(request)")
            #expect(try self.request(sent) == request)
            #expect(try object(sent)["v"] as? Int == 1 && object(sent)["op"] as? String == request.operation.rawValue)
        }
        let play = Request.play(
            items: [Self.item, ItemRequest(clip: Clip(path: "/b.wav"))], wait: false, progress: true)
        #expect(try request(line(play)) == play)
    }

    /// Every reply, as the daemon of version 1 wrote it.
    static let replies: [(Reply, String)] = [
        (.done, #"{"ok":true,"v":1}"#),
        (.ids(["0a0ad6c1de08"]), #"{"ids":["0a0ad6c1de08"],"ok":true,"v":1}"#),
        (.ids(["a", "b"], pausedSince: 1_795_029_000), #"{"ids":["a","b"],"ok":true,"pausedSince":1795029000,"v":1}"#),
        (.ids([], unknown: ["nothere"]), #"{"ids":[],"ok":true,"unknown":["nothere"],"v":1}"#),
        (.cancelled(unknown: []), #"{"ok":true,"unknown":[],"v":1}"#),
        (.cancelled(unknown: ["nothere"]), #"{"ok":true,"unknown":["nothere"],"v":1}"#),
        (
            .failure(64, "malformed request: items[0].clip.path: expected String"),
            #"{"error":{"code":64,"message":"malformed request: items[0].clip.path: expected String"},"ok":false,"v":1}"#
        )
    ]

    @Test func everyReplyIsTheLineVersionOneSentAndReadsBack() throws {
        for (reply, expected) in Self.replies {
            let sent = line(reply)
            #expect(sent == expected)
            #expect(try object(sent) == object(expected))
            guard case .reply(let read)? = try DaemonMessage.decode(Array(sent.utf8)) else {
                Issue.record("\(sent) is not read as a reply")
                continue
            }
            #expect(read == reply)
        }
        let status = DaemonStatus(
            pid: 42, device: "null", deviceOpen: false, paused: false,
            playing: ItemStatus(id: "0a0ad6c1de08", state: .playing, path: "/a.wav", priority: .normal, heard: 1.2),
            queued: [], scheduled: [])
        let sent = line(Reply.status(status))
        #expect(
            try object(sent)["ok"] as? Bool == true && (object(sent)["status"] as? NSDictionary)?["pid"] as? Int == 42)
        guard case .reply(let read)? = try DaemonMessage.decode(Array(sent.utf8)) else {
            throw ProtocolTestError("status")
        }
        #expect(read == .status(status) && read.status == status)
    }

    @Test func theAccessorsSayWhatEachReplyCarries() {
        #expect(Reply.ids(["a"], pausedSince: 5).ids == ["a"] && Reply.ids(["a"], pausedSince: 5).pausedSince == 5)
        #expect(Reply.ids(["a"], unknown: ["b"]).unknown == ["b"])
        #expect(Reply.cancelled(unknown: ["c"]).unknown == ["c"] && Reply.cancelled(unknown: ["c"]).ids == nil)
        #expect(Reply.done.ids == nil && Reply.done.status == nil && Reply.done.error == nil)
        #expect(Reply.failure(69, "x").error == ReplyError(code: 69, message: "x"))
    }

    @Test func aFailedReplyWithoutAnErrorIsStillAFailure() throws {
        // What the daemon writes when a reply cannot be encoded (WireProtocol.encode's fallback).
        guard case .reply(.failure(let error))? = try DaemonMessage.decode(Array(#"{"v":1,"ok":false}"#.utf8)) else {
            throw ProtocolTestError("not a failure")
        }
        #expect(error.code == 70)
    }

    @Test func eventsAreToldFromRepliesAndUnknownKindsAreSkipped() throws {
        let event = Event(time: 1, .finished(EventItem("0a0ad6c1de08"), outcome: Outcome(.played)))
        guard case .event(let read)? = try DaemonMessage.decode(WireProtocol.encode(event).dropLast()) else {
            throw ProtocolTestError("not an event")
        }
        #expect(read == event)
        // A newer daemon's kind: nil, which a client skips.
        #expect(try DaemonMessage.decode(Array(#"{"v":1,"event":"teleported","time":1}"#.utf8)) == nil)
        #expect(throws: (any Error).self) { try DaemonMessage.decode(Array("not json".utf8)) }
        #expect(throws: (any Error).self) { try DaemonMessage.decode(Array(#"{"ok":true}"#.utf8)) }
    }

    // MARK: docs/protocol.md

    private static var protocolDocument: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        }
    }

    @Test func theDocumentedLinesDecode() throws {
        let document = try Self.protocolDocument
        // The example session: each request and reply line.
        let lines = document.split(separator: "\n").map(String.init)
        let sent = lines.filter { $0.hasPrefix("→ ") }.map { String($0.dropFirst(2)) }
        let received = lines.filter { $0.hasPrefix("← ") }.map { String($0.dropFirst(2)) }
        #expect(!sent.isEmpty && !received.isEmpty)
        for text in sent { #expect(throws: Never.self, "\(text)") { _ = try request(text) } }
        for text in received {
            #expect(try DaemonMessage.decode(Array(text.utf8)) != nil, "\(text)")
        }
        guard case .play(let play) = try request(sent[0]) else { throw ProtocolTestError("not a play") }
        #expect(play.wait && !play.progress && play.items.count == 1 && play.items[0].clip.path == "/tmp/a.wav")
        #expect(play.problem == nil)

        // The documented ItemRequest, error reply, status and quiet request.
        let blocks = document.components(separatedBy: "```json\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        let item = try #require(blocks.first { $0.hasPrefix(#"{"clip""#) })
        let decoded = try JSONCoding.decode(ItemRequest.self, from: Array(item.utf8))
        #expect(
            decoded.clip.extraDevices == ["plughw:1"] && decoded.session?.category == .multiRoute
                && decoded.ifBusy == .fail)
        #expect(decoded.problem == nil)
        let error = try #require(blocks.first { $0.hasPrefix(#"{"error""#) })
        guard case .reply(.failure(let failure))? = try DaemonMessage.decode(Array(error.utf8)) else {
            throw ProtocolTestError("the documented error is no failure")
        }
        #expect(failure.code == 64)
        let status = try #require(blocks.first { $0.hasPrefix(#"{"pid""#) })
        #expect(try JSONCoding.decode(DaemonStatus.self, from: Array(status.utf8)).holds == [.deviceBusy])
        // A window a newer daemon writes that this client cannot read is left out, not fatal.
        let hours = try #require(status.range(of: #""quietHours":["#))
        var newer = status
        newer.insert(contentsOf: #""sunset-sunrise","#, at: hours.upperBound)
        let known = try JSONCoding.decode(DaemonStatus.self, from: Array(newer.utf8)).quietHours
        #expect(known == (try JSONCoding.decode(DaemonStatus.self, from: Array(status.utf8)).quietHours))
        #expect(!known.isEmpty, "the documented status has quiet hours to keep")
        let quiet = #"{"v":1,"op":"quiet","state":"until","until":1795030000}"#
        #expect(document.contains(quiet))
        #expect(try request(quiet) == .quiet(.until(1_795_030_000)))
    }

    // MARK: refusals, as version 1's daemon worded them

    /// Lines and the error reply's message the daemon of commit a0cb56d sent for each.
    static let refusals: [(String, String)] = [
        ("hello, daemon", "malformed request: not valid JSON"),
        ("[1,2,3]", "malformed request: expected Dictionary<String, Any>"),
        ("null", "malformed request: missing Dictionary<String, Any>"),
        ("{}", #"malformed request: no protocol version "v""#),
        (#"{"op":"status"}"#, #"malformed request: no protocol version "v""#),
        (#"{"v":99,"op":"status"}"#, "unsupported protocol version 99; this daemon speaks 1"),
        (#"{"v":2,"op":"nope"}"#, "unsupported protocol version 2; this daemon speaks 1"),
        (#"{"v":"1","op":"status"}"#, "malformed request: v: expected Int"),
        (#"{"v":1}"#, #"malformed request: missing "op""#),
        (#"{"v":1,"op":"nope"}"#, "malformed request: op: invalid value"),
        (#"{"v":1,"op":7}"#, "malformed request: op: expected String"),
        (#"{"v":1,"op":"status","items":7}"#, "malformed request: items: expected Array<Any>"),
        (#"{"v":1,"op":"skip","ids":[1]}"#, "malformed request: ids[0]: expected String"),
        (#"{"v":1,"op":"events","progress":1}"#, "malformed request: progress: expected Bool"),
        (
            #"{"v":1,"op":"play","items":[{"clip":{"path":7}}]}"#,
            "malformed request: items[0].clip.path: expected String"
        ),
        (#"{"v":1,"op":"play","items":[{}]}"#, #"malformed request: items[0]: missing "clip""#),
        (
            #"{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav","gain":1,"pan":0}}]}"#,
            #"malformed request: items[0].clip: missing "loops""#
        ),
        (
            #"{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav","gain":1e999,"pan":0,"loops":0}}]}"#,
            "malformed request: not valid JSON"
        ),
        (
            #"{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav","gain":1,"pan":0,"loops":0},"priority":"urgent"}]}"#,
            "malformed request: items[0].priority: invalid value"
        ),
        (
            #"{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav","gain":1,"pan":0,"loops":0},"session":{"category":"record"}}]}"#,
            "malformed request: items[0].session.category: invalid value"
        ),
        (#"{"v":1,"op":"play"}"#, "play needs at least one item"),
        (#"{"v":1,"op":"play","items":[]}"#, "play needs at least one item"),
        (#"{"v":1,"op":"cancel"}"#, "cancel needs ids or a tag"),
        (#"{"v":1,"op":"cancel","ids":[]}"#, "cancel needs ids or a tag"),
        (#"{"v":1,"op":"quiet"}"#, "quiet needs a state: on, off or until"),
        (#"{"v":1,"op":"quiet","state":"maybe"}"#, "malformed request: state: invalid value"),
        (#"{"v":1,"op":"quiet","state":"until"}"#, #"quiet until needs an "until" time"#),
        (#"{"v":1,"op":"alert"}"#, #"alert needs an "alert""#),
        (#"{"v":1,"op":"alert","alert":{}}"#, #"malformed request: alert: missing "path""#)
    ]

    @Test func badLinesGetTheRefusalTheyAlwaysGot() {
        for (text, message) in Self.refusals {
            #expect(refusal(text) == message, "\(text)")
        }
    }

    @Test func unknownFieldsAreIgnoredAndTagWinsOverIds() throws {
        #expect(try request(#"{"v":1,"op":"status","pad":"xx"}"#) == .status)
        #expect(try request(#"{"v":1,"op":"cancel","ids":["a"],"tag":"t"}"#) == .cancel(.tag("t")))
        #expect(try request(#"{"v":1,"op":"wait"}"#) == .wait(ids: [], progress: false))
        #expect(try request(#"{"v":1,"op":"quiet","state":"on","until":5}"#) == .quiet(.on))
    }

    // MARK: values, decided once for client and daemon

    @Test func theValuesAreCheckedByTheSharedRules() {
        let good = ItemRequest(clip: Clip(path: "/a.wav"))
        #expect(Request.play(items: [good]).problem == nil)
        #expect(
            Request.play(items: [good, ItemRequest(clip: Clip(path: "/a.wav", gain: 20))]).problem
                == "items[1]: gain must be 0 to 16, not 20.0")
        #expect(Request.play(items: Array(repeating: good, count: Limits.maxItemsPerPlay)).problem == nil)
        #expect(
            Request.play(items: Array(repeating: good, count: Limits.maxItemsPerPlay + 1)).problem
                == "at most 1000 items per request")
        #expect(
            Request.alert(AlertRequest(path: "rel.wav"), wait: false).problem
                == "alert: path must be absolute, not rel.wav")
        #expect(Request.status.problem == nil)
    }

    @Test func aPlayRequestsKeyIsSentOnlyWhenGivenAndReadBack() throws {
        let good = ItemRequest(clip: Clip(path: "/a.wav"))
        #expect(try object(line(Request.play(items: [good])))["key"] == nil)
        let keyed = Request.play(PlayRequest(items: [good], key: "8f3a-K_9"))
        #expect(try object(line(keyed))["key"] as? String == "8f3a-K_9")
        #expect(try request(line(keyed)) == keyed)
        #expect(keyed.problem == nil)
        for bad in ["", String(repeating: "a", count: 65), "a b", "é", "a/b", "{"] {
            #expect(
                Request.play(PlayRequest(items: [good], key: bad)).problem
                    == "key: 1 to 64 letters, digits, '-' or '_'", "\(bad)")
        }
        #expect(
            refusal(line(keyed).replacingOccurrences(of: #""key":"8f3a-K_9""#, with: #""key":7"#))
                == "malformed request: key: expected String")
    }

    @Test func quietUntilMustLieAheadWithinTheLongestSpan() throws {
        #expect(try QuietRequest.on.setting(at: 100) == .on)
        #expect(try QuietRequest.off.setting(at: 100) == .off(since: 100))
        #expect(try QuietRequest.until(200).setting(at: 100) == .until(200))
        #expect(throws: AnnounceError.usage("quiet until: the time has already passed")) {
            try QuietRequest.until(100).setting(at: 100)
        }
        #expect(throws: AnnounceError.usage("quiet until: the time is too far ahead")) {
            try QuietRequest.until(100 + TimeSpan.longest.seconds + 1).setting(at: 100)
        }
    }
}

private struct ProtocolTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
