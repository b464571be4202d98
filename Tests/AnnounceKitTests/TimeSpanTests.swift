import Testing
@testable import AnnounceKit

@Suite struct TimeSpanTests {
    @Test(arguments: [("500ms", 0.5), ("1.5s", 1.5), ("10s", 10), ("5m", 300), ("1h", 3600), ("2", 2), ("0", 0)])
    func parsesUserDurations(text: String, seconds: Double) {
        #expect(TimeSpan(parsing: text)?.seconds == seconds)
    }

    @Test(arguments: ["", "abc", "-1s", "1x", "ms", "nan", "inf"])
    func rejectsNonsense(text: String) {
        #expect(TimeSpan(parsing: text) == nil)
    }

    @Test func convertsToFramesAndDisplays() {
        #expect(TimeSpan(seconds: 0.5).frames(atRate: 44_100) == 22_050)
        #expect(TimeSpan.format(83.46) == "1:23.4")
        #expect(TimeSpan.format(5) == "0:05.0")
    }
}
