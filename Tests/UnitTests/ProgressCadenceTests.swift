import Foundation
import Logging
import Synchronization
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// The progress cadence as a client sees it, on the in-process daemon with a device paced in real
/// time (64 frames per 1.33 ms): the engine reports from frames heard, so these take the clips'
/// length in real time. The daemon's policies are in InProcessDaemonTests, on a virtual clock.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ProgressCadenceTests {
    /// A client showing progress (`play` on a terminal) gets it ten times a second, for the item
    /// playing when it asks and for one that starts later; the daemon's own unwatched reports
    /// come once a second. The device is paced (64 frames per 1.33 ms).
    @Test func aClientShowingProgressGetsItTenTimesASecond() throws {
        let clip = try InProcessDaemonTests.writeClip(frames: 28_800)  // 600 ms
        defer { unlink(clip.path) }
        try InProcessDaemonTests.withDaemon(opens: [], configure: { $0.beforeWrite = { _ in usleep(1_333) } }) {
            runtime, _ in
            let client = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
            let item = ItemRequest(clip: Clip(path: clip.path))
            let ids = try client.call(Request.play(items: [item, item], wait: true, progress: true)).ids ?? []
            try #require(ids.count == 2)
            var progress: [ItemID: Int] = [:]
            var played = 0
            while played < 2, let message = try client.next() {
                guard case .event(let event) = message, let id = event.id else { continue }
                if event.event == .progress { progress[id, default: 0] += 1 }
                if event.event == .finished, event.outcome?.kind == .played { played += 1 }
            }
            #expect(played == 2)
            for id in ids {
                // About 6; a loaded machine stretches the play, a flood (one per write) would be ~450.
                #expect(
                    (4...15).contains(progress[id, default: 0]),
                    "\(progress[id, default: 0]) progress events in 600 ms of audio, not about 6")
            }
        }
    }

    /// An `events` listener is not a progress watcher (a desktop may keep one for good): the
    /// unwatched reports still come eight times per clip at least, so it sees every mark.
    @Test func anEventsListenerSeesEveryQuarterOfAShortClip() throws {
        // 800 ms: at one report a second, 25 and 50 would go by
        let clip = try InProcessDaemonTests.writeClip(frames: 38_400)
        defer { unlink(clip.path) }
        try InProcessDaemonTests.withDaemon(opens: [], configure: { $0.beforeWrite = { _ in usleep(1_333) } }) {
            runtime, _ in
            let events = try InProcessDaemonTests.play(clip.path, runtime: runtime)
            let marks = events.filter { $0.event == .progress }.compactMap(\.percent)
            #expect(marks == [25, 50, 75], "\(events.map { "\($0.event)\($0.percent.map { " \($0)%" } ?? "")" })")
            #expect(events.last?.outcome?.kind == .played)
        }
    }
}
