import Testing
@testable import AnnounceModel
@testable import AnnounceSystem
@testable import AnnounceSources
@testable import AnnounceOutput
@testable import AnnounceEngine
@testable import AnnounceDaemon
@testable import AnnounceClient

/// Values from the wire or the command line that once trapped the daemon or the
/// client (a trap in the daemon, replayed from the spool, would crash every restart).
@Suite struct RequestValidationTests {
    private func request(_ change: (inout ItemRequest) -> Void) -> ItemRequest {
        var request = ItemRequest(clip: Clip(path: "/tmp/a.wav"))
        change(&request)
        return request
    }

    @Test func aPlainRequestPasses() {
        #expect(Daemon.problem(with: request { _ in }) == nil)
    }

    @Test func refusesAbsurdLoopsTimesAndPaths() {
        // Each names the field it refuses ("at" alone would match almost any message).
        #expect(Daemon.problem(with: request { $0.clip.loops = .max })?.hasPrefix("loops must be") == true)
        #expect(Daemon.problem(with: request { $0.clip.loops = QueueItem.maxLoops }) == nil)
        #expect(Daemon.problem(with: request { $0.clip.start = 1e300 })?.hasPrefix("start must be") == true)
        #expect(Daemon.problem(with: request { $0.delay = 1e300 })?.hasPrefix("delay must be") == true)
        #expect(Daemon.problem(with: request { $0.expire = 1e300 })?.hasPrefix("expire must be") == true)
        #expect(Daemon.problem(with: request { $0.at = 1e300 })?.hasPrefix("at must be") == true)
        #expect(Daemon.problem(with: request { $0.clip.path = "/tmp/a\u{0}.wav" })?.contains("NUL") == true)
    }

    @Test func duckLevelIsFiniteAndAtMostZero() {
        #expect(Daemon.problem(with: request { $0.duckLevel = -12 }) == nil)
        #expect(Daemon.problem(with: request { $0.duckLevel = 0 }) == nil)
        #expect(Daemon.problem(with: request { $0.duckLevel = -60 }) == nil)
        for level: Double in [3, -61, .nan, .infinity, -.infinity] {
            #expect(Daemon.problem(with: request { $0.duckLevel = level })?.hasPrefix("duckLevel must be -60 to 0 dB") == true,
                    "\(level)")
        }
    }

    @Test func devicesForMultiRoute() {
        let multiRoute = AudioSession(category: .multiRoute)
        #expect(Daemon.problem(with: request {
            $0.session = multiRoute
            $0.clip.device = "hw:0"
            $0.clip.extraDevices = ["hw:1", "hw:2"]
        }) == nil)
        // Without a device of its own, the daemon's device comes first.
        #expect(Daemon.problem(with: request {
            $0.session = multiRoute
            $0.clip.extraDevices = ["hw:1"]
        }) == nil)
        #expect(Daemon.problem(with: request { $0.clip.extraDevices = [] }) == nil)
        // Extra devices in any other category, the default one included.
        for session in [nil, AudioSession(category: .playback), AudioSession(category: .ambient)] {
            #expect(Daemon.problem(with: request {
                $0.session = session
                $0.clip.device = "hw:0"
                $0.clip.extraDevices = ["hw:1"]
            })?.hasPrefix("extraDevices need category multi-route") == true)
        }
        // Eight in all, the daemon's device counted.
        let eight = (1...7).map { "hw:\($0)" }
        #expect(Daemon.problem(with: request { $0.session = multiRoute; $0.clip.device = "hw:0"; $0.clip.extraDevices = eight }) == nil)
        #expect(Daemon.problem(with: request { $0.session = multiRoute; $0.clip.extraDevices = eight }) == nil)
        #expect(Daemon.problem(with: request { $0.session = multiRoute; $0.clip.extraDevices = eight + ["hw:8"] })?
            .hasPrefix("at most 8 devices") == true)
        // Names: none empty, none over 1024 bytes, none twice.
        let long = String(repeating: "x", count: 1025)
        for extra in [[""], [long], ["hw:1", ""]] {
            #expect(Daemon.problem(with: request { $0.session = multiRoute; $0.clip.extraDevices = extra })
                    == "device name is empty or too long")
        }
        #expect(Daemon.problem(with: request { $0.clip.device = "" }) == "device name is empty or too long")
        #expect(Daemon.problem(with: request { $0.clip.device = long }) == "device name is empty or too long")
        #expect(Daemon.problem(with: request { $0.clip.device = String(repeating: "x", count: 1024) }) == nil)
        #expect(Daemon.problem(with: request {
            $0.session = multiRoute
            $0.clip.device = "hw:0"
            $0.clip.extraDevices = ["hw:1", "hw:0"]
        }) == "device hw:0 is given twice")
    }

    @Test func existingChecksStillApply() {
        #expect(Daemon.problem(with: request { $0.clip.path = "a.wav" })?.hasPrefix("path must be absolute") == true)
        #expect(Daemon.problem(with: request { $0.clip.path = "/" + String(repeating: "a", count: 4096) }) == "path is too long")
        #expect(Daemon.problem(with: request { $0.clip.gain = 17 })?.hasPrefix("gain must be") == true)
        #expect(Daemon.problem(with: request { $0.clip.gain = .nan })?.hasPrefix("gain must be") == true)
        #expect(Daemon.problem(with: request { $0.clip.pan = 2 })?.hasPrefix("pan must be") == true)
        #expect(Daemon.problem(with: request { $0.dropAfter = 1.5 })?.hasPrefix("dropAfter must be") == true)
        #expect(Daemon.problem(with: request { $0.tag = "" }) == "tag is empty or too long")
    }

    @Test func alerts() {
        #expect(Daemon.problem(with: AlertRequest(path: "/s/ding.wav")) == nil)
        #expect(Daemon.problem(with: AlertRequest(path: "/s/ding.wav", gain: 16, ignoreQuiet: true, device: "hw:0")) == nil)
        #expect(Daemon.problem(with: AlertRequest(path: "ding.wav"))?.hasPrefix("path must be absolute") == true)
        #expect(Daemon.problem(with: AlertRequest(path: "/s/a\u{0}.wav"))?.contains("NUL") == true)
        #expect(Daemon.problem(with: AlertRequest(path: "/" + String(repeating: "a", count: 4096))) == "path is too long")
        for gain: Float in [-0.1, 16.5, .nan, .infinity] {
            #expect(Daemon.problem(with: AlertRequest(path: "/a.wav", gain: gain))?.hasPrefix("gain must be 0 to 16") == true, "\(gain)")
        }
        #expect(Daemon.problem(with: AlertRequest(path: "/a.wav", device: "")) == "device name is empty or too long")
    }

    @Test func durationsStopAtTheLongestAndFramesSaturate() {
        #expect(TimeSpan(parsing: "1e300s") == nil)
        #expect(TimeSpan(parsing: "1000000000s")?.seconds == 1e9)
        #expect(TimeSpan(seconds: 1e300).frames(atRate: 48_000) == .max)
        #expect(TimeSpan(seconds: .nan).frames(atRate: 48_000) == 0)
    }

    @Test func programLengthDoesNotOverflow() {
        #expect(EngineDriver.programFrames(fileFrames: .max / 2, startFrame: 0, loops: 3) == nil)
    }
}
