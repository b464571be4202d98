import Foundation
import Synchronization
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceSystem

/// An item at `--rate 2` interrupted mid-way goes on at the source position it was heard to,
/// through the daemon in this process (InProcessDaemonTests' scripted device).
@Suite(.serialized, .timeLimit(.minutes(1))) struct ReshapedResumeTests {
    /// 300 Hz and 600 Hz alternating every half second for 4 s: where a change is heard says
    /// where in the source the output is.
    static let source = ReshapedSourceTests.tone((0..<8).map { (frequency: $0 % 2 == 0 ? 300.0 : 600.0, seconds: 0.5) })

    /// The device is lost after 0.65 s heard at 2×, which is 1.3 s of the source (in its third
    /// half second, 300 Hz); the item resumes there: 0.2 s of source, 0.1 s heard, before 600 Hz.
    @Test func anItemAtRateTwoLostMidWayResumesAtTheSourcePositionHeard() throws {
        // the item's path; what plays comes from `makeSource`
        let clip = try InProcessDaemonTests.writeClip(frames: 2_400)
        defer { unlink(clip.path) }
        let made = Mutex<[MemorySource]>([])
        try InProcessDaemonTests.withDaemon(
            opens: [.works(failAfterFrames: 31_200), .unavailable],
            makeSource: { _, _, _ in
                let source = MemorySource(floats: Self.source, channels: 1)
                made.withLock { $0.append(source) }
                return source
            }
        ) { runtime, outputs in
            let client = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
            try client.send(Request.events)
            let request = ItemRequest(
                clip: Clip(path: clip.path, rate: 2), session: AudioSession(category: .soloAmbient))
            try client.send(Request.play(items: [request], wait: true))
            var events: [Event] = []
            while let message = try client.next() {
                guard case .event(let event) = message else { continue }
                events.append(event)
                if event.event == .finished { break }
            }
            #expect(events.filter { $0.event == .interruptionBegan }.map(\.reason) == [.deviceLost])
            let finished = try #require(events.last)
            #expect(finished.outcome?.kind == .played, "\(finished)")
            #expect(finished.heard == 4, "the whole source, heard once, in source time: \(finished.heard ?? -1)")
            let starts = events.filter { $0.event == .started }
            #expect(
                starts.count == 2 && abs((starts.last?.heard ?? 0) - 1.3) <= 0.02,
                "resumed at \(starts.last?.heard ?? -1) s")
            // The play that resumed (the one before it found the device unavailable) sought the
            // source to 1.3 s, within the map's 20 ms.
            let seek = try #require(made.withLock { $0.last?.seeks.first })
            #expect(abs(seek - 62_400) <= 960, "sought to \(seek)")

            let opened = outputs()
            try #require(opened.count == 2)
            #expect(opened[0].int16Samples.count == 31_168, "whole writes of 64 frames before the one that fails")
            // Heard after resuming: 300 Hz, then 600 Hz from 0.1 s on (the source's 1.5 s).
            let after = opened[1].int16Samples.map { Double($0) / 32_768 }
            let change = try #require(firstChange(after), "no change to 600 Hz heard")
            #expect(abs(change - 4_800) <= 480, "600 Hz from frame \(change) heard, not 4 800 (0.1 s)")
            #expect(abs(Double(after.count) - (4 - 1.3) * 24_000) <= 480, "\(after.count) frames: the rest at 2×")
        }
    }

    /// The output frame where 600 Hz first outweighs 300 Hz, in 10 ms windows every millisecond.
    private func firstChange(_ samples: [Double]) -> Int? {
        let (window, hop) = (480, 48)
        for start in stride(from: 0, to: samples.count - window, by: hop) {
            let slice = samples[start..<start + window]
            if power(600, slice) > power(300, slice) { return start + window / 2 - hop / 2 }
        }
        return nil
    }

    private func power(_ frequency: Double, _ samples: ArraySlice<Double>) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / 48_000)
        var (previous, beforePrevious) = (0.0, 0.0)
        for sample in samples {
            (previous, beforePrevious) = (sample + coefficient * previous - beforePrevious, previous)
        }
        return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
    }
}
