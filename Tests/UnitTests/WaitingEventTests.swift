import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// A client that shows progress learns why its item waits (`waiting` events, docs/protocol.md).
@Suite(.serialized, .timeLimit(.minutes(1))) struct WaitingEventTests {
    /// Every event of `ids` until all have finished.
    static func events(of ids: [ItemID], on client: DaemonClient) throws -> [Event] {
        var events: [Event] = []
        var finished = 0
        while finished < ids.count, let message = try client.next() {
            guard case .event(let event) = message, let id = event.id, ids.contains(id) else { continue }
            events.append(event)
            if event.event == .finished { finished += 1 }
        }
        return events
    }

    /// At `--rate 2` the waits are wall time: half the clips' length (the client's `seconds`
    /// already is; the playing item's counted length and frames heard are source time).
    @Test(arguments: [(nil, [0.4, 0.2]), (2.0, [0.2, 0.1])])
    func queuedItemsAreToldHowManyPlayFirstAndAboutHowLong(rate: Double?, expected: [Double]) throws {
        let clip = try InProcessDaemonTests.writeClip(frames: 9_600)  // 200 ms
        defer { unlink(clip.path) }
        // The device holds the first item's first write until the third has been told it waits:
        // the estimates are audio time (length less frames heard), so none has been heard yet.
        let gate = MixingEngineTests.Gate(at: 0)
        try InProcessDaemonTests.withDaemon(opens: [], configure: { $0.beforeWrite = gate.check }) { runtime, _ in
            let client = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
            let item = ItemRequest(clip: Clip(path: clip.path, seconds: 0.2 / (rate ?? 1), rate: rate))
            let ids = try client.call(Request.play(items: [item, item, item], wait: true, progress: true)).ids ?? []
            try #require(ids.count == 3)
            gate.reached.wait()
            var waits: [Event] = []
            var finished = 0
            while finished < ids.count, let message = try client.next() {
                guard case .event(let event) = message, let id = event.id, ids.contains(id) else { continue }
                if event.event == .finished { finished += 1 }
                guard event.event == .waiting else { continue }
                waits.append(event)
                if id == ids[2] && event.ahead == 2 { gate.release.signal() }
            }
            let second = waits.filter { $0.id == ids[1] }
            let third = waits.filter { $0.id == ids[2] }
            #expect(second.map(\.reason) == [.queued] && second.map(\.ahead) == [1], "\(second)")
            #expect(third.map(\.ahead) == [2, 1], "two ahead, then one: \(third)")
            // 0.4 s while the first has not been heard; 0.2 s once the second starts (at 1×).
            #expect(third.map(\.wait) == expected, "\(third)")
            #expect(!waits.contains { $0.id == ids[0] }, "the first plays at once: it never waits")
        }
    }

    @Test func aBusyDeviceIsNamedWithItsHolder() throws {
        let clip = try InProcessDaemonTests.writeClip(frames: 4_800)
        defer { unlink(clip.path) }
        try InProcessDaemonTests.withDaemon(opens: [.busy, .busy]) { runtime, _ in
            let client = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
            let ids =
                try client.call(
                    Request.play(items: [ItemRequest(clip: Clip(path: clip.path))], wait: true, progress: true)
                ).ids ?? []
            let waits = try Self.events(of: ids, on: client).filter { $0.event == .waiting }
            #expect(waits.map(\.reason) == [.deviceBusy], "\(waits)")
            #expect(waits.first?.warning == "busy, held by pid 4242 (other-player)")
        }
    }

    @Test func anItemPlayedIntoAPausedQueueIsToldSo() throws {
        let clip = try InProcessDaemonTests.writeClip(frames: 4_800)
        defer { unlink(clip.path) }
        try InProcessDaemonTests.withDaemon(opens: []) { runtime, _ in
            let control = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
            _ = try control.call(Request.pause)
            let since = try #require(runtime.pausedSince)
            let client = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
            let reply = try client.call(
                Request.play(items: [ItemRequest(clip: Clip(path: clip.path))], wait: true, progress: true))
            #expect(reply.pausedSince == since, "the reply says since when the queue is paused")
            let first = try #require(try client.next())
            guard case .event(let event) = first else {
                Issue.record("\(first)")
                return
            }
            #expect(event.event == .waiting && event.reason == .paused)
            let status = try #require(try control.call(Request.status).status)
            #expect(status.paused && status.pausedSince == since)
            _ = try control.call(Request.resume)
            #expect(runtime.pausedSince == nil)
            #expect(try Self.events(of: reply.ids ?? [], on: client).last?.outcome?.kind == .played)
        }
    }
}
