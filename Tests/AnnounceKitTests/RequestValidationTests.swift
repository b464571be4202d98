import Testing
@testable import AnnounceKit

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

    @Test func durationsStopAtTheLongestAndFramesSaturate() {
        #expect(TimeSpan(parsing: "1e300s") == nil)
        #expect(TimeSpan(parsing: "1000000000s")?.seconds == 1e9)
        #expect(TimeSpan(seconds: 1e300).frames(atRate: 48_000) == .max)
        #expect(TimeSpan(seconds: .nan).frames(atRate: 48_000) == 0)
    }

    @Test func programLengthDoesNotOverflow() {
        #expect(Player.programFrames(fileFrames: .max / 2, startFrame: 0, loops: 3) == nil)
    }
}
