import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

@Suite struct TimeSpanTests {
    @Test(arguments: [
        ("500ms", 0.5), ("1.5s", 1.5), ("10s", 10), ("5m", 300), ("1h", 3600), ("2", 2), ("0", 0),
        ("1m30s", 90), ("1h2m3s", 3723), ("1h30m", 5400), ("2s500ms", 2.5), ("1m0.5s", 60.5),
        ("0:24.9", 24.9), ("1:30", 90), ("1:02:03", 3723), ("0:00:00.5", 0.5), ("90:00", 5400)
    ])
    func parsesUserDurations(text: String, seconds: Double) {
        #expect(TimeSpan(parsing: text)?.seconds == seconds)
    }

    @Test(arguments: [
        "", "abc", "-1s", "1x", "ms", "nan", "inf", "1e3", "+5", "1.2.3", ".", "1s1m", "1m1m", "5 s",
        "1:60", "1:02:60", "1:2:3:4", ":30", "1:", "1.5:00", "0x10", "1m30"
    ])
    func rejectsNonsense(text: String) {
        #expect(TimeSpan(parsing: text) == nil)
    }

    @Test(arguments: [
        ("-1s", "a duration cannot be negative"), ("1:75", "seconds must be below 60, not 75"),
        ("1:60:00", "minutes must be below 60, not 60"),
        ("3d", "unknown unit 'd'; use h, m, s or ms, like 90, 1.5s, 500ms, 1m30s or 1:30"),
        ("30s1m", "units go largest first, each once, like 90, 1.5s, 500ms, 1m30s or 1:30")
    ])
    func saysWhy(text: String, reason: String) {
        #expect(Self.reason { try TimeSpan(validating: text) } == reason)
    }

    /// The reason `parse` gives (no Equatable on TimeTextError: each conformance costs every start).
    static func reason<T>(_ parse: () throws -> T) -> String? {
        do {
            _ = try parse()
            return nil
        } catch { return (error as? TimeTextError)?.description }
    }

    @Test func timeOfDaySaysWhy() {
        #expect(
            Self.reason { try TimeOfDay(validating: "25:00") }
                == "hour 25 is past 23 (a 24-hour clock runs 00:00 to 23:59)")
        #expect(Self.reason { try TimeOfDay(validating: "07:61") } == "minute 61 is past 59")
        #expect(TimeOfDay(parsing: "23:59:59") == TimeOfDay(parsing: "23:59:59"))
    }

    @Test func convertsToFramesAndDisplays() {
        #expect(TimeSpan(seconds: 0.5).frames(atRate: 44_100) == 22_050)
        #expect(TimeSpan.format(83.46) == "1:23.4")
        #expect(TimeSpan.format(5) == "0:05.0")
    }
}
