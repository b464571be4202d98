import FoundationEssentials
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

// Quiet mode's rules and the config file, on a fake local clock: the local time of day is
// the epoch time modulo a day (as in UTC), so `at("23:00", day: 1)` reads as it says.

private let fakeLocal: QuietMode.LocalMinutes = { Int(($0 / 60).rounded(.down)) % 1440 }

/// Seconds since the epoch of `hh:mm` on `day`.
private func at(_ time: String, day: Int = 0) -> Double {
    let parts = time.split(separator: ":").map { Double($0)! }
    return Double(day) * 86_400 + parts[0] * 3600 + parts[1] * 60
}

private func hours(_ windows: String...) -> [QuietHours] {
    windows.map { try! QuietHours(parsing: $0) }
}

private func mode(_ setting: QuietSetting? = nil, _ windows: [QuietHours] = []) -> QuietMode {
    QuietMode(setting: setting, hours: windows, localMinutes: fakeLocal)
}

@Suite struct QuietHoursTests {
    @Test(arguments: [
        ("22:00-07:00", 1320, 420), ("7:30-8:00", 450, 480), (" 12:00 - 13:00 ", 720, 780),
        ("00:00-24:00", 0, 1440), ("23:59-00:00", 1439, 0), ("22:00:00-07:00", 1320, 420)
    ])
    func parses(_ text: String, _ start: Int, _ end: Int) throws {
        let window = try QuietHours(parsing: text)
        #expect(window.start == start && window.end == end)
    }

    @Test(arguments: [
        "22:00", "25:00-01:00", "12:60-13:00", "10:00-10:00", "a-b", "24:00-01:00", "1:2-3:04",
        "12:00-13:00-14:00", "-", "", "12h-13h", "１２:00-13:00",
        "22:00:30-07:00", "+7:00-8:00", "7:00-24:00:00"
    ])
    func refuses(_ text: String) {
        #expect(throws: AnnounceError.self) { try QuietHours(parsing: text) }
    }

    @Test func describesAsHHMM() throws {
        #expect(try QuietHours(parsing: "7:05-8:00").description == "07:05-08:00")
        #expect(try QuietHours(parsing: "0:00-24:00").description == "00:00-24:00")
    }

    @Test func containsStartButNotEnd() throws {
        let day = try QuietHours(parsing: "12:00-13:00")
        #expect(
            !day.contains(minute: 719) && day.contains(minute: 720) && day.contains(minute: 779)
                && !day.contains(minute: 780))
        let night = try QuietHours(parsing: "22:00-07:00")
        #expect(night.contains(minute: 1320) && night.contains(minute: 1439) && night.contains(minute: 0))
        #expect(night.contains(minute: 419) && !night.contains(minute: 420) && !night.contains(minute: 1319))
        let whole = try QuietHours(parsing: "00:00-24:00")
        #expect((0..<1440).allSatisfy(whole.contains(minute:)))
    }
}

/// The one HH:MM[:SS] parser: quiet hours, `--at` and `quiet until` all read times with it.
@Suite struct TimeOfDayTests {
    @Test(arguments: [
        ("7:30", 7, 30, 0), ("07:30", 7, 30, 0), ("0:00", 0, 0, 0), ("23:59", 23, 59, 0),
        ("07:30:15", 7, 30, 15), ("23:59:59", 23, 59, 59)
    ])
    func parses(_ text: String, _ hour: Int, _ minute: Int, _ second: Int) throws {
        let time = try #require(TimeOfDay(parsing: text))
        #expect(time.hour == hour && time.minute == minute && time.second == second)
    }

    @Test(arguments: [
        "24:00", "25:00", "12:60", "12:00:60", "7:5", "7:05:1", "123:00", "07", "07:00:00:00", "",
        ":", "+7:00", "-1:00", "07:+5", "7 :30", "07:30 ", "١٢:00", "１２:00", "99999999999999999999:00"
    ])
    func refuses(_ text: String) {
        #expect(TimeOfDay(parsing: text) == nil)
    }
}

@Suite struct QuietModeTests {
    @Test func withoutASettingFollowsTheHours() {
        let quiet = mode(nil, hours("22:00-07:00", "12:00-12:30"))
        #expect(!quiet.isQuiet(at: at("21:59")))
        #expect(quiet.isQuiet(at: at("22:00")) && quiet.isQuiet(at: at("03:00", day: 1)))
        #expect(!quiet.isQuiet(at: at("07:00", day: 1)))
        #expect(quiet.isQuiet(at: at("12:15", day: 1)) && !quiet.isQuiet(at: at("12:30", day: 1)))
        #expect(!mode().isQuiet(at: at("03:00")), "no hours, no setting: never quiet")
        #expect(quiet.state(at: at("23:00")).reason == "quiet hours 22:00-07:00")
    }

    @Test func onIsQuietUntilChanged() {
        let quiet = mode(.on, hours("22:00-07:00"))
        for time in ["08:00", "21:00", "23:00"] { #expect(quiet.isQuiet(at: at(time, day: 3))) }
        #expect(quiet.activeSetting(at: at("08:00", day: 30)) == .on)
    }

    @Test func untilIsQuietBeforeItsTimeThenTheHoursApply() {
        let end = at("09:30")
        let quiet = mode(.until(end), hours("22:00-07:00"))
        #expect(quiet.isQuiet(at: at("08:00")) && quiet.isQuiet(at: end - 0.5))
        #expect(!quiet.isQuiet(at: end), "ends at its time")
        #expect(quiet.activeSetting(at: end) == nil)
        #expect(quiet.isQuiet(at: at("22:00")), "the evening's hours apply again")
        let state = quiet.state(at: at("08:00"))
        #expect(state.quiet && state.setting == .until && state.until == end)
    }

    @Test func offInsideQuietHoursHoldsUntilTheNextWindowStarts() {
        // `quiet off` at 23:00 inside 22:00-07:00: sound now and all night...
        let quiet = mode(.off(since: at("23:00")), hours("22:00-07:00"))
        #expect(!quiet.isQuiet(at: at("23:00")) && !quiet.isQuiet(at: at("03:00", day: 1)))
        #expect(!quiet.isQuiet(at: at("21:59", day: 1)))
        #expect(quiet.state(at: at("23:30")).reason == "announce quiet off, overriding quiet hours 22:00-07:00")
        // ...but tomorrow's 22:00 window is quiet again.
        #expect(quiet.isQuiet(at: at("22:00", day: 1)))
        #expect(quiet.activeSetting(at: at("22:00", day: 1)) == nil)
        #expect(quiet.state(at: at("22:00", day: 1)).setting == nil)
    }

    @Test func offBeforeAWindowEndsWhenThatWindowStarts() {
        let quiet = mode(.off(since: at("20:00")), hours("22:00-07:00", "12:00-13:00"))
        #expect(!quiet.isQuiet(at: at("21:59")))
        #expect(quiet.isQuiet(at: at("22:00")))
        // Set inside the midday window: the night window is the next to start.
        let midday = mode(.off(since: at("12:30")), hours("22:00-07:00", "12:00-13:00"))
        #expect(!midday.isQuiet(at: at("12:45")) && !midday.isQuiet(at: at("21:00")))
        #expect(midday.isQuiet(at: at("22:30")))
    }

    @Test func offGivenAtAWindowsFirstMinuteCoversThatWindow() {
        let quiet = mode(.off(since: at("22:00") + 20), hours("22:00-07:00"))
        #expect(!quiet.isQuiet(at: at("22:00") + 30) && !quiet.isQuiet(at: at("06:59", day: 1)))
        #expect(quiet.isQuiet(at: at("22:00", day: 1)))
    }

    @Test func offLapsesAfterADayAndNeverWithoutHours() {
        let quiet = mode(.off(since: at("23:00")), hours("22:00-07:00"))
        #expect(quiet.isQuiet(at: at("23:00", day: 5)))
        let noHours = mode(.off(since: at("23:00")))
        #expect(!noHours.isQuiet(at: at("23:00", day: 5)))
        #expect(noHours.activeSetting(at: at("23:00", day: 5)) == .off(since: at("23:00")))
    }

    /// The system clock's conversion used to trap (time_t(_:) on NaN, infinities, huge values).
    @Test func systemLocalMinutesTakesAnyTime() {
        for epoch in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 9.3e18, 1e17] {
            #expect(QuietMode.systemLocalMinutes(epoch) == 0, "\(epoch)")
        }
        #expect((0..<1440).contains(QuietMode.systemLocalMinutes(1_795_000_000.7)))
    }

    @Test func usesTheInjectedLocalClock() {
        // Local time three hours ahead of the fake UTC-like clock.
        let ahead = QuietMode(hours: hours("22:00-23:00"), localMinutes: { (fakeLocal($0) + 180) % 1440 })
        #expect(ahead.isQuiet(at: at("19:30")) && !ahead.isQuiet(at: at("22:30")))
    }

    @Test func settingsRoundTripThroughJSON() throws {
        for setting in [QuietSetting.on, .off(since: 1_795_000_000.5), .until(1_795_003_600)] {
            let data = try JSONEncoder().encode(setting)
            #expect(try JSONDecoder().decode(QuietSetting.self, from: data) == setting)
        }
        #expect(String(decoding: try JSONEncoder().encode(QuietSetting.on), as: UTF8.self) == #"{"state":"on"}"#)
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(QuietSetting.self, from: Data(#"{"state":"until"}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(QuietSetting.self, from: Data(#"{"state":"loud"}"#.utf8))
        }
        // A damaged runtime file: `announce quiet` used to trap showing this as local time.
        for json in [#"{"state":"until","until":1e300}"#, #"{"state":"off","since":-1e19}"#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(QuietSetting.self, from: Data(json.utf8)) }
        }
    }

    @Test func categoriesQuietModeSilences() {
        #expect(SessionCategory.ambient.silencedByQuietMode)
        #expect(SessionCategory.soloAmbient.silencedByQuietMode)
        #expect(!SessionCategory.playback.silencedByQuietMode)
        #expect(!SessionCategory.multiRoute.silencedByQuietMode)
        #expect(QueueItem(id: "a", clip: Clip(path: "/a.wav"), arrival: 0).sessionCategory == .soloAmbient)
    }

    @Test func itemsWithoutACategoryStillDecode() throws {
        // What a spool entry written before categories existed looks like: no "category" key.
        let old = QueueItem(id: "0123456789ab", clip: Clip(path: "/a.wav"), arrival: 5)
        let json = String(decoding: try JSONEncoder().encode(old), as: UTF8.self)
        #expect(!json.contains("category"))
        let decoded = try JSONDecoder().decode(QueueItem.self, from: Data(json.utf8))
        #expect(decoded == old && decoded.category == nil)

        var item = old
        item.category = .playback
        let withCategory = try JSONDecoder().decode(QueueItem.self, from: try JSONEncoder().encode(item))
        #expect(withCategory.category == .playback)

        let request = #"{"clip":{"path":"/a.wav","gain":1,"pan":0,"loops":0},"category":"multi-route"}"#
        #expect(try JSONDecoder().decode(ItemRequest.self, from: Data(request.utf8)).category == .multiRoute)
        let refused = #"{"clip":{"path":"/a.wav","gain":1,"pan":0,"loops":0},"category":"record"}"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ItemRequest.self, from: Data(refused.utf8)) }
    }
}

@Suite struct UserConfigurationTests {
    @Test func readsEveryKey() {
        let text = """
            # announce
            device = file:FILE=/tmp/out.wav,FORMAT=wav
            duck-level = -6 dB   # a little less
            quiet-hours = 22:00-07:00
            Quiet-Hours=12:00-12:30, 18:00-18:15

            """
        let (configuration, warnings) = UserConfiguration.parse(text, name: "cfg")
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(configuration.device == "file:FILE=/tmp/out.wav,FORMAT=wav")
        #expect(configuration.duckLevel == -6)
        #expect(configuration.quietHours.map(\.description) == ["22:00-07:00", "12:00-12:30", "18:00-18:15"])
    }

    /// A file saved with Windows line ends: "\r\n" is one Character, so it must still split into lines.
    @Test func readsCRLFLines() {
        let text = "device = hw:1\r\nvolume = 11\r\nquiet-hours = 22:00-07:00\r\n"
        let (configuration, warnings) = UserConfiguration.parse(text, name: "cfg")
        #expect(configuration.device == "hw:1")
        #expect(configuration.quietHours.map(\.description) == ["22:00-07:00"])
        #expect(warnings.count == 1 && warnings.first?.hasPrefix("cfg:2: unknown key 'volume'") == true, "\(warnings)")
    }

    @Test func aFileThatIsNoConfigFileGivesTenWarningsNotOneALine() {
        let garbage = (1...50).map { "\u{7f}ELF garbage line \($0)" }.joined(separator: "\n")
        let (configuration, warnings) = UserConfiguration.parse(garbage, name: "cfg")
        #expect(configuration == UserConfiguration())
        #expect(warnings.count == 10 && warnings[0].hasPrefix("cfg:1: expected 'key = value'"), "\(warnings)")
        #expect(warnings.last == "cfg: 41 more problems; is it announce's config file?", "\(warnings)")
    }

    @Test func silenceGapAndLevelSetWhatSkipSilenceCuts() {
        let (configuration, warnings) = UserConfiguration.parse(
            "silence-gap = 500ms\nsilence-level = -40dB\n", name: "cfg")
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(configuration.silence == SilenceRule(gap: 0.5, level: -40))
        #expect(UserConfiguration().silence == SilenceRule(gap: 0.3, level: -50), "the documented defaults")
        let bad =
            "silence-gap = 20ms\nsilence-gap = 11s\nsilence-gap = soon\nsilence-level = -10dB\nsilence-level = -100\n"
        let (kept, problems) = UserConfiguration.parse(bad, name: "cfg")
        #expect(kept.silence == .default, "a bad value leaves the default")
        #expect(problems.count == 5, "\(problems)")
        #expect(
            problems.prefix(3).allSatisfy { $0.contains("silence-gap must be a pause of 50ms to 10s") }, "\(problems)")
        #expect(
            problems.suffix(2).allSatisfy { $0.contains("silence-level must be a level in dB from -90 to -20") },
            "\(problems)")
    }

    @Test func keepOpenIsAGraceOf100msTo1h() {
        #expect(UserConfiguration().keepOpen == 0.1, "the documented default: a grace that writes nothing")
        let (configuration, warnings) = UserConfiguration.parse("keep-open = 10s\n", name: "cfg")
        #expect(warnings.isEmpty && configuration.keepOpen == 10, "\(warnings)")
        let (kept, problems) = UserConfiguration.parse(
            "keep-open = 50ms\nkeep-open = 2h\nkeep-open = long\n", name: "cfg")
        #expect(kept.keepOpen == 0.1, "a bad value leaves the default")
        #expect(
            problems.count == 3
                && problems.allSatisfy { $0.contains("keep-open must be a time of 100ms to 1h, like 10s") },
            "\(problems)")
    }

    @Test func emptyTextMeansTheDefaults() {
        let (configuration, warnings) = UserConfiguration.parse("\n# nothing\n   \n", name: "cfg")
        #expect(configuration == UserConfiguration() && warnings.isEmpty)
        #expect(configuration.device == nil && configuration.duckLevel == -12 && configuration.quietHours.isEmpty)
    }

    @Test func problemsAreOneWarningEachNeverFatal() {
        let text = """
            device = hw:1
            volume = 11
            duck-level = loud
            quiet-hours = 25:00-01:00, 22:00-07:00
            just words
            device =
            duck-level = -3dB
            """
        let (configuration, warnings) = UserConfiguration.parse(text, name: "/home/u/.config/announce/config")
        #expect(warnings.count == 5, "\(warnings)")
        let prefixes = warnings.map { $0.split(separator: ":").prefix(2).joined(separator: ":") }
        #expect(
            prefixes == [
                "/home/u/.config/announce/config:2", "/home/u/.config/announce/config:3",
                "/home/u/.config/announce/config:4", "/home/u/.config/announce/config:5",
                "/home/u/.config/announce/config:6"
            ])
        #expect(
            warnings[0].hasSuffix(
                "unknown key 'volume' (known: device, loudness, duck-level, quiet-hours, quiet-level, wake-up, keep-open, silence-gap, silence-level, connect-timeout, stall-timeout, reconnect-limit)"
            ))
        #expect(warnings[1].contains("duck-level"))
        #expect(warnings[2].contains("'25:00' is not a time of day"))
        // The good values around the bad ones still count.
        #expect(configuration.device == "hw:1")
        #expect(configuration.duckLevel == -3)
        #expect(configuration.quietHours.map(\.description) == ["22:00-07:00"])
    }

    @Test(arguments: [
        ("-12dB", -12.0), ("-12 dB", -12), ("-6db", -6), ("-3", -3), ("0dB", 0), ("-60dB", -60), ("-4.5dB", -4.5)
    ])
    func duckLevels(_ text: String, _ expected: Double) {
        #expect(UserConfiguration.parseDecibels(text) == expected)
    }

    @Test(arguments: ["+1dB", "3", "-61dB", "loud", "dB", "", "-inf", "nan", "-12 dBFS", "--12"])
    func badDuckLevels(_ text: String) {
        #expect(UserConfiguration.parseDecibels(text) == nil)
    }

    @Test func pathFollowsXDGThenHome() {
        let xdg = ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"]
        #expect(UserConfiguration.defaultPath(environment: { xdg[$0] }) == "/x/cfg/announce/config")
        let relative = ["XDG_CONFIG_HOME": "cfg", "HOME": "/home/u"]
        #expect(UserConfiguration.defaultPath(environment: { relative[$0] }) == "/home/u/.config/announce/config")
        let home = ["HOME": "/home/u"]
        #expect(UserConfiguration.defaultPath(environment: { home[$0] }) == "/home/u/.config/announce/config")
    }

    @Test func aMissingFileIsTheDefaults() {
        let (configuration, warnings) = UserConfiguration.load(path: "/nonexistent/announce/config")
        #expect(configuration == UserConfiguration() && warnings.isEmpty)
        let (_, directory) = UserConfiguration.load(path: "/")
        #expect(directory.count == 1 && directory[0].hasPrefix("/: "), "\(directory)")
    }
}
