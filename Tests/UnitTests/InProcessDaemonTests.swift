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

/// A daemon in this process (device trouble, sessions, alerts) whose device is scripted: busy at open, gone at open, or a
/// capturing device that fails after some frames, like an unplugged card. The daemon's
/// reaction (wait, retry with backoff, resume at the heard frame) is checked on the frames
/// each opened device received and on the events a client saw. Its clock is virtual
/// (`VirtualClock`): backoff, expiry and the idle exit take no real time.
@Suite(.serialized, .timeLimit(.minutes(1))) struct InProcessDaemonTests {
    enum Open {
        case busy
        case unavailable
        case works(failAfterFrames: Int? = nil)
    }

    /// What one test's daemon opened: `outputs()` the devices that worked, `attempts()` every
    /// open it asked for. Per daemon: other suites run theirs at the same time.
    struct Opened {
        let outputs: () -> [CapturingOutput]
        let attempts: () -> Int
        func callAsFunction() -> [CapturingOutput] { outputs() }
    }

    /// Time that stands still but for the daemon's skips: when nothing is in flight and the
    /// daemon would only wait for a deadline, it goes there at once. So the deadlines fall in
    /// the same order every run, whatever the machine's load.
    final class VirtualClock: Sendable {
        private let time = Mutex(Date().timeIntervalSince1970)
        func now() -> Double { time.withLock { $0 } }
        func skip(to deadline: Double) { time.withLock { $0 = max($0, deadline) } }
    }

    /// Runs a daemon on a fresh runtime directory until it is idle; `body` talks to it.
    static func withDaemon(
        opens script: [Open], configPath: String? = nil,
        configure: @escaping @Sendable (CapturingOutput) -> Void = { _ in },
        makeSource: EngineDriver.SourceMaker? = nil,
        _ body: (RuntimeDirectory, Opened) throws -> Void
    ) throws {
        let path = NSTemporaryDirectory() + "announce-inproc-\(UUID().uuidString)"
        let runtime = try RuntimeDirectory.prepare(path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let remaining = Mutex(script)
        let attempts = Atomic<Int>(0)
        let opened = Mutex<[CapturingOutput]>([])
        let opener: PlaybackEngine.OutputOpener = { device, request throws(AnnounceError) in
            attempts.add(1, ordering: .relaxed)
            let next = remaining.withLock { $0.isEmpty ? Open.works() : $0.removeFirst() }
            switch next {
            case .busy: throw .deviceBusy(device: device, reason: "busy, held by pid 4242 (other-player)")
            case .unavailable:
                throw .deviceUnavailable(device: device, reason: "the sound server refused the connection")
            case .works(let failAfter):
                let output = CapturingOutput(
                    format: OutputFormat(
                        sampleFormat: .int16, sampleRate: request.sampleRate,
                        channels: request.channels))
                output.failAfterFrames = failAfter
                configure(output)
                opened.withLock { $0.append(output) }
                return output
            }
        }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        var configuration = Daemon.Configuration(device: "fake", idleExit: 0.2, ready: ReadyPipe(fd: ends[1]))
        configuration.keepOpen = 0.01
        configuration.configPath = configPath
        // The scripted device's frames are compared with the clips' own.
        configuration.loudness = .off
        // The scripted device is not ALSA's: the daemon's check at accept time leaves it to the opener.
        let clock = VirtualClock()
        let daemon = Daemon(
            runtime: runtime, configuration: configuration, logger: Logger(label: "test-daemon"),
            clock: clock.now, skipTo: clock.skip, openOutput: opener, probeDevice: { _, _ in },
            makeSource: makeSource)
        let finished = CountingSemaphore()
        final class Box: @unchecked Sendable {
            let daemon: Daemon
            init(_ daemon: Daemon) { self.daemon = daemon }
        }
        let box = Box(daemon)
        Thread {
            _ = try? box.daemon.run()
            finished.signal()
        }.start()
        var ready = [UInt8](repeating: 0, count: 6)
        _ = read(ends[0], &ready, 6)
        close(ends[0])
        // Connected until the body is done: on virtual time the idle exit would come between its clients.
        var holder = try DaemonClient.connect(autoStart: false, runtime: runtime)
        #expect(holder != nil)
        try body(runtime, Opened(outputs: { opened.withLock { $0 } }, attempts: { attempts.load(ordering: .relaxed) }))
        holder = nil
        finished.wait()
    }

    /// Plays `path` and returns every event up to its finished one.
    static func play(
        _ path: String, runtime: RuntimeDirectory, ifBusy: IfBusy? = nil, expire: Double? = nil,
        session: AudioSession? = nil
    ) throws -> [Event] {
        let client = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
        try client.send(Request.events)
        try client.send(
            Request.play(
                items: [
                    ItemRequest(
                        clip: Clip(path: path), expire: expire, session: session,
                        ifBusy: ifBusy)
                ], wait: true))
        var events: [Event] = []
        while let message = try client.next() {
            guard case .event(let event) = message else { continue }
            events.append(event)
            if event.event == .finished { break }
        }
        return events
    }

    /// What a client hears of each item makes sense in order (`ItemLifecycle`): interruption-began
    /// and -ended alternate, at most one finished, and nothing of the item after it.
    static func expectOneLifeEach(_ events: [Event], finished ids: [ItemID] = []) {
        var open: Set<ItemID> = []
        var finished: Set<ItemID> = []
        for event in events {
            guard let id = event.id else { continue }
            #expect(!finished.contains(id), "\(event.event) after \(id)'s outcome: \(events.map(\.event))")
            switch event.event {
            case .interruptionBegan:
                #expect(open.insert(id).inserted, "\(id) interrupted twice: \(events.map(\.event))")
            case .interruptionEnded:
                #expect(open.remove(id) != nil, "\(id) resumed unannounced: \(events.map(\.event))")
            case .finished: finished.insert(id)
            default: break
            }
        }
        for id in ids { #expect(finished.contains(id), "\(id) has its outcome") }
    }

    /// A 16-bit stereo 48 kHz WAV of `ramp(frames:channels:)`.
    static func writeClip(frames: Int) throws -> (path: String, samples: [Int16]) {
        let samples = ramp(frames: frames, channels: 2)
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + samples.count * 2))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(2))
        append(UInt32(48_000))
        append(UInt32(48_000 * 4))
        append(UInt16(4))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(samples.count * 2))
        for sample in samples { append(sample) }
        let path = NSTemporaryDirectory() + "announce-inproc-\(UUID().uuidString).wav"
        try data.write(to: URL(fileURLWithPath: path))
        return (path, samples)
    }

    @Test func aBusyDeviceIsWaitedForAndThenPlaysTheWholeClip() throws {
        let clip = try Self.writeClip(frames: 9_600)
        defer { unlink(clip.path) }
        try Self.withDaemon(opens: [.busy, .busy]) { runtime, outputs in
            let events = try Self.play(clip.path, runtime: runtime)
            let began = events.filter { $0.event == .interruptionBegan }
            #expect(began.count == 1 && began.first?.reason == .deviceBusy, "\(events.map(\.event))")
            #expect(began.first?.warning?.contains("pid 4242") == true, "the event names who holds it")
            #expect(events.contains { $0.event == .interruptionEnded && $0.shouldResume == true })
            #expect(events.last?.outcome?.kind == .played)
            Self.expectOneLifeEach(events)
            #expect(outputs().count == 1)
            #expect(outputs().first?.int16Samples == clip.samples, "the whole clip, once")
        }
    }

    /// The config file is reread when it changes: quiet hours added while the daemon runs
    /// silence the next ambient item, and taking them out lets the one after play.
    @Test func aChangedConfigFileAppliesToTheNextItem() throws {
        let clip = try Self.writeClip(frames: 480)
        let config = NSTemporaryDirectory() + "announce-config-\(UUID().uuidString)"
        defer {
            unlink(clip.path)
            unlink(config)
        }
        let ambient = AudioSession(category: .ambient)
        try Self.withDaemon(opens: [], configPath: config) { runtime, _ in
            #expect(
                try Self.play(clip.path, runtime: runtime, session: ambient).last?.outcome?.kind == .played,
                "no config file yet")
            try "quiet-hours = 00:00-24:00\n".write(toFile: config, atomically: true, encoding: .utf8)
            let quiet = try Self.play(clip.path, runtime: runtime, session: ambient).last?.outcome
            #expect(quiet?.kind == .silenced, "quiet hours all day: \(quiet.map { "\($0)" } ?? "none")")
            // A file that cannot be used (here one over 1 MiB, put in place at once) keeps what was read before.
            try String(repeating: "# padding\n", count: 110_000).write(
                toFile: config, atomically: true, encoding: .utf8)
            let still = try Self.play(clip.path, runtime: runtime, session: ambient).last?.outcome
            #expect(
                still?.kind == .silenced,
                "an unusable file must not drop the quiet hours: \(still.map { "\($0)" } ?? "none")")
            try "# no quiet hours\n".write(toFile: config, atomically: true, encoding: .utf8)
            #expect(
                try Self.play(clip.path, runtime: runtime, session: ambient).last?.outcome?.kind == .played,
                "quiet hours taken out")
        }
    }

    @Test func ifBusyFailEndsAt69NamingTheHolder() throws {
        let clip = try Self.writeClip(frames: 4_800)
        defer { unlink(clip.path) }
        try Self.withDaemon(opens: [.busy]) { runtime, outputs in
            let events = try Self.play(clip.path, runtime: runtime, ifBusy: .fail)
            let outcome = try #require(events.last?.outcome)
            #expect(outcome.kind == .failed && outcome.code == 69)
            #expect(outcome.reason?.contains("held by pid 4242 (other-player)") == true, "\(outcome)")
            #expect(outputs().isEmpty)
        }
    }

    /// On both lanes: the busy device is retried (with backoff) until --expire ends the wait.
    @Test(arguments: [SessionCategory.soloAmbient, .ambient])
    func waitingForABusyDeviceEndsAtTheExpiry(category: SessionCategory) throws {
        let clip = try Self.writeClip(frames: 4_800)
        defer { unlink(clip.path) }
        try Self.withDaemon(opens: Array(repeating: .busy, count: 50)) { runtime, outputs in
            let events = try Self.play(
                clip.path, runtime: runtime, expire: 0.6, session: AudioSession(category: category))
            #expect(events.last?.outcome?.kind == .expired, "\(events.last.map { "\($0)" } ?? "none")")
            #expect(events.filter { $0.event == .interruptionBegan }.map(\.reason) == [.deviceBusy])
            // Tried at once and again 0.25 s later (the next try, at 0.75 s, is after the expiry).
            #expect(outputs.attempts() == 2, "tried \(outputs.attempts()) times")
            #expect(outputs().isEmpty)
        }
    }

    @Test func anAlertDoesNotWaitForABusyDevice() throws {
        let clip = try Self.writeClip(frames: 2_400)
        defer { unlink(clip.path) }
        try Self.withDaemon(opens: [.busy]) { runtime, _ in
            let log = try EventLog(runtime)
            let id = try #require(
                try Self.request(runtime, Request.alert(AlertRequest(path: clip.path), wait: false)).ids?.first)
            let finished = try log.wait("the alert's end") { $0.event == .finished && $0.id == id }
            #expect(finished.outcome?.kind == .failed && finished.outcome?.code == 69, "\(finished)")
            #expect(finished.outcome?.reason?.contains("pid 4242") == true)
        }
    }

    @Test func anAlertOverAStreamThroughASoundServerIsAStreamOfItsOwnThere() throws {
        let talk = try Self.writeClip(frames: 48_000)
        let chime = try Self.writeClip(frames: 2_400)
        defer {
            unlink(talk.path)
            unlink(chime.path)
        }
        // The talk's stream holds at frame 4 800 until the alert has ended (5 s at most: mixed
        // into the talk's stream instead, the alert would wait for it).
        let gate = MixingEngineTests.Gate(at: 4_800, timeout: 5)
        try Self.withDaemon(
            opens: [],
            configure: { output in
                output.mixedByServer = true
                output.beforeWrite = gate.check
            }
        ) { runtime, outputs in
            let log = try EventLog(runtime)
            let talkID = try #require(
                try Self.request(runtime, Request.play(items: [ItemRequest(clip: Clip(path: talk.path))])).ids?.first)
            gate.reached.wait()
            let alertID = try #require(
                try Self.request(runtime, Request.alert(AlertRequest(path: chime.path), wait: false)).ids?.first)
            let alerted = try log.wait("the alert's end") { $0.event == .finished && $0.id == alertID }
            #expect(alerted.outcome?.kind == .played, "\(alerted)")
            gate.release.signal()
            let finished = try log.wait("the talk's end") { $0.event == .finished && $0.id == talkID }
            #expect(finished.outcome?.kind == .played && finished.heard == 1.0, "\(finished)")
            let opened = outputs()
            try #require(opened.count == 2, "\(opened.count) streams opened")
            #expect(
                opened[0].int16Samples == talk.samples, "the playing stream untouched: continuous, sample for sample")
            #expect(opened[1].int16Samples == chime.samples, "the alert whole, in a stream of its own the server mixes")
        }
    }

    @Test func replaceEndsAPlayingMixingStreamWithTheTag() throws {
        let bed = try Self.writeClip(frames: 4_800)
        let news = try Self.writeClip(frames: 2_400)
        defer {
            unlink(bed.path)
            unlink(news.path)
        }
        try Self.withDaemon(opens: []) { runtime, _ in
            let log = try EventLog(runtime)
            var looping = Clip(path: bed.path)
            looping.loops = -1
            let bedID = try #require(
                try Self.request(
                    runtime,
                    Request.play(items: [
                        ItemRequest(clip: looping, tag: "news", session: AudioSession(category: .ambient))
                    ])
                ).ids?.first)
            try log.wait("the bed's start") { $0.event == .started && $0.id == bedID }
            let newsID = try #require(
                try Self.request(
                    runtime,
                    Request.play(items: [
                        ItemRequest(clip: Clip(path: news.path), tag: "news", replace: true)
                    ])
                ).ids?.first)
            let replaced = try log.wait("the bed's end") { $0.event == .finished && $0.id == bedID }
            #expect(replaced.outcome?.kind == .replaced && replaced.outcome?.reason == "replaced by \(newsID)")
            try log.wait("the news") { $0.event == .finished && $0.id == newsID && $0.outcome?.kind == .played }
        }
    }

    @Test func theDaemonsOwnDeviceTwiceInAMultiRouteIsRefused() throws {
        let clip = try Self.writeClip(frames: 2_400)
        defer { unlink(clip.path) }
        try Self.withDaemon(opens: []) { runtime, outputs in
            #expect(
                throws: AnnounceError.daemon(code: 64, message: "items[0]: device fake (the daemon's) is given twice")
            ) {
                try Self.request(
                    runtime,
                    Request.play(items: [
                        ItemRequest(
                            clip: Clip(path: clip.path, extraDevices: ["fake"]),
                            session: AudioSession(category: .multiRoute))
                    ]))
            }
            #expect(outputs().isEmpty)
        }
    }

    /// On the main lane (solo-ambient) and on the mixed lane (ambient) alike.
    @Test(arguments: [SessionCategory.soloAmbient, .ambient])
    func aDeviceLostMidClipIsReopenedAndTheClipResumesWhereItStopped(category: SessionCategory) throws {
        let clip = try Self.writeClip(frames: 24_000)
        defer { unlink(clip.path) }
        // Fails after 4 800 frames; the first reopen finds it still gone; the second works.
        try Self.withDaemon(opens: [.works(failAfterFrames: 4_800), .unavailable]) { runtime, outputs in
            let events = try Self.play(clip.path, runtime: runtime, session: AudioSession(category: category))
            let lost = events.filter { $0.event == .interruptionBegan }
            #expect(lost.map(\.reason) == [.deviceLost], "\(events.map(\.event))")
            let routes = events.filter { $0.event == .routeChange }.map(\.reason)
            #expect(routes == [.oldDeviceUnavailable, .newDeviceAvailable], "\(events.map(\.event))")
            #expect(events.last?.outcome?.kind == .played)
            Self.expectOneLifeEach(events)
            let opened = outputs()
            try #require(opened.count == 2)
            let before = opened[0].int16Samples
            let after = opened[1].int16Samples
            #expect(before == Array(clip.samples.prefix(4_800 * 2)), "what was written before the failure")
            #expect(before.count + after.count == clip.samples.count, "nothing lost, nothing played twice")
            // The reopened device fades in over 50 ms (2 400 frames) from frame 4 800, then is exact.
            #expect(Array(after.dropFirst(2_400 * 2)) == Array(clip.samples.dropFirst((4_800 + 2_400) * 2)))
            #expect(abs(Int(after[0])) < 64, "starts from silence, not mid-waveform")
        }
    }

    /// A source that is not a file, lost mid-clip with its device and played again on the
    /// reopened one, goes on where its kind says: a file's at the frame heard, speech's at the
    /// start of the sentence heard (4 000), each frame counted heard once.
    @Test(arguments: [(Resumption.exactFrame, 4_800), (.sentenceStart, 4_000)])
    func aSourceResumesWhereItsKindSays(resumption: Resumption, resumeFrame: Int) throws {
        let clip = try Self.writeClip(frames: 2_400)  // the item's path; what plays comes from `makeSource`
        defer { unlink(clip.path) }
        let samples = ramp(frames: 24_000, channels: 2)
        try Self.withDaemon(
            opens: [.works(failAfterFrames: 4_800), .unavailable],
            makeSource: { _, _, _ in
                let source = MemorySource(samples: samples, channels: 2, resumption: resumption)
                source.sentenceStarts = [2_000, 4_000, 6_000]
                return source
            }
        ) { runtime, outputs in
            let events = try Self.play(clip.path, runtime: runtime, session: AudioSession(category: .soloAmbient))
            #expect(events.filter { $0.event == .interruptionBegan }.map(\.reason) == [.deviceLost])
            let finished = try #require(events.last)
            #expect(finished.outcome?.kind == .played, "\(finished)")
            #expect(finished.heard == 0.5, "every frame heard once: \(finished.heard ?? -1)")
            let opened = outputs()
            try #require(opened.count == 2)
            #expect(opened[0].int16Samples == Array(samples.prefix(4_800 * 2)))
            // From the resume frame, fading in over 50 ms (2 400 frames), then exact.
            let after = opened[1].int16Samples
            #expect(after.count == samples.count - resumeFrame * 2)
            #expect(Array(after.dropFirst(2_400 * 2)) == Array(samples.dropFirst((resumeFrame + 2_400) * 2)))
        }
    }

    /// A live stream cannot seek: lost mid-way, it rejoins what the stream gives now (a new
    /// source, from its first frame) instead of failing with 64 for a seek it cannot make.
    @Test func aLiveSourceThatCannotSeekRejoinsTheStreamAfterAnInterruption() throws {
        let clip = try Self.writeClip(frames: 2_400)
        defer { unlink(clip.path) }
        let earlier = ramp(frames: 24_000, channels: 2)
        let now = Array(ramp(frames: 36_000, channels: 2).suffix(24_000 * 2))
        let made = Mutex(0)
        try Self.withDaemon(
            opens: [.works(failAfterFrames: 4_800), .unavailable],
            makeSource: { _, _, _ in
                let first = made.withLock { made in
                    defer { made += 1 }
                    return made == 0
                }
                // The fake traps any seek.
                return MemorySource(
                    samples: first ? earlier : now, channels: 2, lengthKnown: false, canSeek: false,
                    resumption: .liveRejoin)
            }
        ) { runtime, outputs in
            let events = try Self.play(clip.path, runtime: runtime, session: AudioSession(category: .soloAmbient))
            let finished = try #require(events.last)
            #expect(finished.outcome?.kind == .played, "\(finished)")
            #expect(finished.heard == 0.6, "what was heard, both times: \(finished.heard ?? -1)")
            let opened = outputs()
            try #require(opened.count == 2)
            #expect(opened[0].int16Samples == Array(earlier.prefix(4_800 * 2)))
            let after = opened[1].int16Samples
            #expect(after.count == now.count)
            #expect(Array(after.dropFirst(2_400 * 2)) == Array(now.dropFirst(2_400 * 2)))
        }
    }

    /// An `events` subscriber that reads until what a test waits for has come.
    final class EventLog {
        let client: DaemonClient
        private(set) var events: [Event] = []

        init(_ runtime: RuntimeDirectory) throws {
            client = try #require(try DaemonClient.connect(autoStart: false, runtime: runtime))
            try client.send(Request.events)
        }

        @discardableResult
        func wait(_ what: String, until matches: (Event) -> Bool) throws -> Event {
            if let seen = events.first(where: matches) { return seen }
            while let message = try client.next() {
                guard case .event(let event) = message else { continue }
                events.append(event)
                if matches(event) { return event }
            }
            throw AnnounceError.internal("the daemon went away before \(what)")
        }
    }

    static func request(_ runtime: RuntimeDirectory, _ request: Request) throws -> Reply {
        try #require(try DaemonClient.connect(autoStart: false, runtime: runtime)).call(request)
    }

    /// A spoken-audio item plays on the main lane; an --interrupt-spoken-audio item (mixable)
    /// pauses it, and when that one ends the first goes on by itself, or waits for
    /// `announce resume` when the interrupter had --no-notify-others.
    @Test(arguments: [true, false]) func spokenAudioIsPausedByAnInterrupterAndResumes(notify: Bool) throws {
        let talk = try Self.writeClip(frames: 48_000)
        let chime = try Self.writeClip(frames: 2_400)
        defer {
            unlink(talk.path)
            unlink(chime.path)
        }
        // The first device holds its write at frame 4 800 until the interrupter is under way.
        let gate = MixingEngineTests.Gate(at: 4_800)
        try Self.withDaemon(opens: [], configure: { output in output.beforeWrite = gate.check }) { runtime, _ in
            let log = try EventLog(runtime)
            let spoken = AudioSession(category: .playback, mode: .spokenAudio)
            let talkID = try #require(
                try Self.request(
                    runtime,
                    Request.play(items: [
                        ItemRequest(clip: Clip(path: talk.path), session: spoken)
                    ])
                ).ids?.first)
            gate.reached.wait()
            var options = SessionOptions(interruptSpokenAudioAndMixWithOthers: true)
            options.notifyOthersOnDeactivation = notify
            let chimeID = try #require(
                try Self.request(
                    runtime,
                    Request.play(items: [
                        ItemRequest(
                            clip: Clip(path: chime.path), session: AudioSession(category: .playback, options: options))
                    ])
                ).ids?.first)
            let began = try log.wait("the interruption") { $0.event == .interruptionBegan && $0.id == talkID }
            #expect(began.reason == .spokenAudioInterrupted)
            gate.release.signal()
            try log.wait("the chime's end") { $0.event == .finished && $0.id == chimeID }
            let ended = try log.wait("the interruption's end") { $0.event == .interruptionEnded && $0.id == talkID }
            #expect(ended.shouldResume == notify)
            if !notify {
                // The talk's stop may still be in flight when the chime ends: it is held once acknowledged.
                var status = try #require(try Self.request(runtime, Request.status).status)
                let deadline = Date().addingTimeInterval(5)
                while (status.holds ?? []).isEmpty && Date() < deadline {
                    status = try #require(try Self.request(runtime, Request.status).status)
                }
                #expect(status.holds == [QueueHold.awaitingResume.reason], "the main lane waits for announce resume")
                #expect(status.queued.map(\.state) == [.interrupted], "still interrupted until it is heard again")
                _ = try Self.request(runtime, Request.resume)
            }
            let finished = try log.wait("the talk's end") { $0.event == .finished && $0.id == talkID }
            #expect(finished.outcome?.kind == .played)
            #expect(finished.heard == 1.0, "heard in full, once: \(finished.heard ?? -1)")
            Self.expectOneLifeEach(log.events, finished: [chimeID, talkID])
        }
    }

    @Test func anAlertThatIsNotAudioFailsWith65AndTheDaemonGoesOn() throws {
        let path = NSTemporaryDirectory() + "announce-inproc-\(UUID().uuidString).wav"
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: path))
        let clip = try Self.writeClip(frames: 2_400)
        defer {
            unlink(path)
            unlink(clip.path)
        }
        try Self.withDaemon(opens: []) { runtime, outputs in
            let log = try EventLog(runtime)
            let id = try #require(
                try Self.request(runtime, Request.alert(AlertRequest(path: path), wait: false)).ids?.first)
            let finished = try log.wait("the alert's end") { $0.event == .finished && $0.id == id }
            #expect(finished.outcome?.kind == .failed && finished.outcome?.code == 65, "\(finished)")
            let good = try #require(
                try Self.request(runtime, Request.alert(AlertRequest(path: clip.path), wait: false)).ids?.first)
            let played = try log.wait("the second alert's end") { $0.event == .finished && $0.id == good }
            #expect(played.outcome?.kind == .played)
            #expect(outputs().first?.int16Samples == clip.samples, "an alert alone is sample-exact")
        }
    }
}
