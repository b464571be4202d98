import AnnounceEngine
import Foundation
import Testing

@testable import AnnounceModel

/// The rules of ducking other applications (OtherAudioDuck, DESIGN §3) on a virtual clock and a
/// pretend sound server: which streams are lowered, to what, and that each is put back exactly.
@Suite struct OtherAudioDuckTests {
    static let own: Int64 = 4242
    static let gain = 0.25  // about -12 dB

    func duck() -> OtherAudioDuck { OtherAudioDuck(ownProcessID: Self.own, shape: GainRamp.shape) }

    /// A server's streams, with `apply` doing what the daemon does with a step's changes.
    struct Server {
        var streams: [OtherStream]
        mutating func apply(_ step: DuckStep) {
            for change in step.changes {
                if let index = streams.firstIndex(where: { $0.index == change.index }) {
                    streams[index].volume = change.volume
                }
            }
        }
        func volume(_ index: UInt32) -> [UInt32]? { streams.first { $0.index == index }?.volume }
    }

    @Test func lowersOthersRampsAndRestoresExactly() {
        var duck = duck()
        var server = Server(streams: [
            OtherStream(index: 1, volume: [65536, 60000], processID: 100, application: "mpv"),
            OtherStream(index: 2, volume: [50000, 50000], processID: 101, role: "music", application: "firefox"),
            OtherStream(index: 3, volume: [65536, 65536], processID: Self.own, application: "ALSA plug-in [announce]"),
            OtherStream(
                index: 4, volume: [65536, 65536], processID: 999, role: "announce", application: "other announce")
        ])
        duck.retarget(Self.gain, seconds: 0.15, now: 0)
        let first = duck.step(server.streams, now: 0)
        #expect(
            first.journalFirst && first.journal?.map(\.index) == [1, 2],
            "the journal knows both before they are lowered")
        server.apply(first)
        var previous = server.volume(1)!
        for tick in 1...20 {
            server.apply(duck.step(server.streams, now: Double(tick) * 0.01))
            let now = server.volume(1)!
            #expect(now[0] <= previous[0], "the ramp down never goes up")
            previous = now
        }
        // Volumes are cubic in amplitude: 0.25^(1/3) = 0.63.
        #expect(server.volume(1) == [41285, 37798])
        #expect(server.volume(2) == [31498, 31498])
        #expect(
            server.volume(3) == [65536, 65536] && server.volume(4) == [65536, 65536],
            "announce's own streams are never ducked")
        duck.retarget(1, seconds: 0.4, now: 1)
        var last = DuckStep()
        for tick in 0...45 {
            last = duck.step(server.streams, now: 1 + Double(tick) * 0.01)
            server.apply(last)
        }
        #expect(server.volume(1) == [65536, 60000] && server.volume(2) == [50000, 50000], "put back exactly")
        #expect(duck.isIdle && duck.lowered.isEmpty)
        #expect(!last.journalFirst && last.journal == nil || last.journal == [])
    }

    @Test func aCallsStreamIsNeverLowered() {
        var duck = duck()
        duck.sparedRoles = ["phone", "communication"]
        var server = Server(streams: [
            OtherStream(index: 1, volume: [65536, 65536], processID: 100, role: "music", application: "mpv"),
            OtherStream(index: 2, volume: [65536, 65536], processID: 101, role: "phone", application: "linphone")
        ])
        duck.retarget(Self.gain, seconds: 0, now: 0)
        server.apply(duck.step(server.streams, now: 0))
        #expect(server.volume(1) == [41285, 41285], "the music is lowered")
        #expect(server.volume(2) == [65536, 65536], "the call is not")
        #expect(duck.lowered.map(\.index) == [1])
    }

    @Test func aStreamThatAppearsIsLoweredAndOneTheUserChangedIsLeftAlone() {
        var duck = duck()
        var server = Server(streams: [OtherStream(index: 1, volume: [65536, 65536], processID: 100)])
        duck.retarget(Self.gain, seconds: 0.15, now: 0)
        server.apply(duck.step(server.streams, now: 0.2))
        server.streams.append(OtherStream(index: 7, volume: [30000, 30000], processID: 300))
        let appeared = duck.step(server.streams, now: 0.25)
        #expect(appeared.journalFirst && appeared.journal?.map(\.index) == [1, 7])
        server.apply(appeared)
        #expect(server.volume(7) == [18899, 18899])
        server.streams[0].volume = [20000, 20000]  // the user turns it down further during the duck
        server.apply(duck.step(server.streams, now: 0.8))
        #expect(duck.lowered.map(\.index) == [7], "the changed stream is forgotten")
        server.apply(duck.step(server.streams, now: 0.85))
        #expect(
            duck.lowered.map(\.index) == [7] && server.volume(1) == [20000, 20000], "and not taken again as a new one")
        duck.retarget(1, seconds: 0.4, now: 1)
        server.apply(duck.step(server.streams, now: 2))
        #expect(server.volume(1) == [20000, 20000], "left as the user set it")
        #expect(server.volume(7) == [30000, 30000])
    }

    @Test func aNewStreamsVolumeSetByTheServerJustAfterItAppearsIsItsOriginal() {
        var duck = duck()
        var server = Server(streams: [OtherStream(index: 1, volume: [65536, 65536])])
        duck.retarget(Self.gain, seconds: 0, now: 0)
        server.apply(duck.step(server.streams, now: 0))
        server.streams[0].volume = [50000, 50000]  // WirePlumber's restore-stream, 30 ms later
        let settled = duck.step(server.streams, now: 0.03)
        #expect(settled.journalFirst && settled.journal?.first?.original == [50000, 50000])
        server.apply(settled)
        #expect(server.volume(1) == [31498, 31498], "lowered from the server's volume")
        duck.retarget(1, seconds: 0, now: 1)
        server.apply(duck.step(server.streams, now: 1))
        #expect(server.volume(1) == [50000, 50000])
    }

    @Test func aStreamThatEndsWhileLoweredGetsItsRestoreEntryBack() {
        var duck = duck()
        var server = Server(streams: [
            OtherStream(index: 1, volume: [65536, 65536], processID: 100, application: "mpv"),
            OtherStream(index: 2, volume: [40000, 40000], processID: 101, application: "paplay"),
            OtherStream(index: 3, volume: [65536, 65536], processID: 102, application: "no database")
        ])
        let stereo: [Int32] = [1, 2]
        let saved = RestoreEntry(
            name: "sink-input-by-application-name:mpv", channelMap: stereo, volume: [], muted: false)
        let restores: [UInt32: StreamRestore] = [
            1: StreamRestore(
                stream: RestoreEntry(name: saved.name, channelMap: stereo, volume: [65536, 65536]), saved: saved),
            2: StreamRestore(
                stream: RestoreEntry(
                    name: "sink-input-by-application-name:paplay", channelMap: stereo,
                    volume: [40000, 40000], muted: true), saved: nil)
        ]
        duck.retarget(Self.gain, seconds: 0, now: 0)
        #expect(duck.newcomers(in: server.streams).map(\.index) == [1, 2, 3])
        let first = duck.step(server.streams, restores: restores, now: 0)
        #expect(
            first.journalFirst && first.journal?.map(\.restore) == [restores[1], restores[2], nil],
            "the journal has them before the lowering")
        server.apply(first)
        #expect(duck.newcomers(in: server.streams).isEmpty, "read once, before the first lowering")
        #expect(duck.step(server.streams, now: 0.05).restoreEntries.isEmpty)
        server.streams = []  // all three end while lowered
        let ended = duck.step(server.streams, now: 0.1)
        // The entry as it was; with none read back (pipewire-pulse), the stream's own with its original volume.
        #expect(
            ended.restoreEntries == [
                saved,
                RestoreEntry(
                    name: "sink-input-by-application-name:paplay", channelMap: stereo,
                    volume: [40000, 40000], muted: true)
            ])
        #expect(!ended.journalFirst && ended.journal == [], "the journal forgets them once the entries are written")
        duck.retarget(1, seconds: 0, now: 1)
        #expect(duck.step(server.streams, now: 1).restoreEntries.isEmpty && duck.isIdle)
    }

    @Test func aStreamPutBackAtTheEndNeedsNoRestoreEntry() {
        var duck = duck()
        var server = Server(streams: [OtherStream(index: 1, volume: [65536, 65536], processID: 100)])
        let place = StreamRestore(
            stream: RestoreEntry(name: "sink-input-by-application-name:x", channelMap: [1, 2], volume: []), saved: nil)
        duck.retarget(Self.gain, seconds: 0, now: 0)
        server.apply(duck.step(server.streams, restores: [1: place], now: 0))
        duck.retarget(1, seconds: 0, now: 1)
        let released = duck.step(server.streams, now: 1)
        server.apply(released)
        #expect(released.restoreEntries.isEmpty && server.volume(1) == [65536, 65536])
        #expect(duck.step([], now: 2).restoreEntries.isEmpty, "its end after the duck is none of announce's business")
    }

    @Test func roundingByTheServerIsNotAUserChange() {
        var duck = duck()
        var server = Server(streams: [OtherStream(index: 1, volume: [65536, 65536])])
        duck.retarget(Self.gain, seconds: 0, now: 0)
        server.apply(duck.step(server.streams, now: 0))
        server.streams[0].volume = server.streams[0].volume.map { $0 + 1 }  // pipewire-pulse's float round trip
        _ = duck.step(server.streams, now: 0.1)
        #expect(duck.lowered.count == 1)
    }

    @Test func cubeRootMatchesTheLibrary() {
        for x in stride(from: 0.001, through: 1, by: 0.0137) {
            #expect(abs(OtherAudioDuck.cubeRoot(x) - cbrt(x)) < 1e-12, "x = \(x)")
        }
    }

    /// A seeded random walk: streams come and go, users change volumes, ducks start, change level and
    /// end at random moments. Invariants after every step: announce's own streams never change; a
    /// lowered stream is never above its original nor below its original at the deepest gain; the
    /// journal (what was written) always holds every lowered stream before it is lowered; and once
    /// released and settled, every stream the user did not touch has exactly its original volume.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomWalk(seed: UInt64) {
        var generator = SplitMix64(state: seed)
        var duck = duck()
        var server = Server(streams: [])
        var originals: [UInt32: [UInt32]] = [:]
        var touched: [UInt32: [UInt32]] = [:]
        var journal: [LoweredStream] = []
        var next: UInt32 = 1
        var now = 0.0
        var deepest = 1.0
        for _ in 0..<2000 {
            now += Double(Int.random(in: 1...30, using: &generator)) / 1000
            switch Int.random(in: 0..<40, using: &generator) {
            case 0, 1:
                let volume = UInt32.random(in: 1000...90000, using: &generator)
                let own = Int.random(in: 0..<4, using: &generator) == 0
                server.streams.append(
                    OtherStream(index: next, volume: [volume, volume / 2], processID: own ? Self.own : Int64(next)))
                originals[next] = [volume, volume / 2]
                next += 1
            case 2 where !server.streams.isEmpty:
                server.streams.remove(at: Int.random(in: 0..<server.streams.count, using: &generator))
            case 3 where !server.streams.isEmpty:
                let index = Int.random(in: 0..<server.streams.count, using: &generator)
                let stream = server.streams[index]
                if stream.processID != Self.own {
                    let set = stream.volume.map { $0 / 2 + 5000 }
                    server.streams[index].volume = set
                    // Lowered a while ago: the user's from here on. Otherwise (not lowered, or just
                    // now: a server's policy settling) simply its volume from now.
                    let lowered = duck.lowered.first { $0.index == stream.index }
                    if lowered.map({ now - $0.since >= OtherAudioDuck.settleSeconds }) == true
                        || touched[stream.index] != nil
                    {
                        touched[stream.index] = set
                    } else {
                        originals[stream.index] = set
                    }
                }
            case 4:
                let gain = [0.001, 0.063, 0.25, 0.5].randomElement(using: &generator)!
                deepest = min(deepest, gain)
                duck.retarget(gain, seconds: 0.15, now: now)
            case 5, 6:
                duck.retarget(1, seconds: 0.4, now: now)
            default:
                break
            }
            let step = duck.step(server.streams, now: now)
            if step.journalFirst, let written = step.journal { journal = written }
            for change in step.changes {
                #expect(
                    journal.contains { $0.index == change.index } || change.volume == originals[change.index],
                    "seed \(seed): \(change.index) lowered before the journal knew it")
            }
            server.apply(step)
            if !step.journalFirst, let written = step.journal { journal = written }
            if duck.isIdle {
                // The duck is over: what users set is simply the streams' volume for the next one.
                for (index, set) in touched { originals[index] = set }
                touched = [:]
            }
            for stream in server.streams {
                if let set = touched[stream.index] {
                    #expect(
                        stream.volume == set, "seed \(seed): announce changed \(stream.index) after its user set it")
                    continue
                }
                let original = originals[stream.index]!
                if stream.processID == Self.own {
                    #expect(stream.volume == original, "seed \(seed): own stream changed")
                }
                let floor = OtherAudioDuck.scaled(original, gain: deepest)
                #expect(
                    zip(stream.volume, original).allSatisfy { $0 <= $1 }
                        && zip(stream.volume, floor).allSatisfy { $0 >= $1 },
                    "seed \(seed): \(stream.volume) outside \(floor)...\(original)")
            }
        }
        duck.retarget(1, seconds: 0.4, now: now)
        let step = duck.step(server.streams, now: now + 1)
        server.apply(step)
        for stream in server.streams where touched[stream.index] == nil {
            #expect(
                stream.volume == originals[stream.index], "seed \(seed): stream \(stream.index) not restored exactly")
        }
        #expect(duck.isIdle && (step.journal ?? journal).isEmpty, "seed \(seed): something left in the journal")
    }
}
