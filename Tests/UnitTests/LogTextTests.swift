import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// The one escaping rule for names in daemon.log.
@Suite struct LogTextTests {
    @Test func plainTextIsLeftAlone() {
        #expect(escapedForLog("/home/ana/Sounds/ding dong – café.wav") == "/home/ana/Sounds/ding dong – café.wav")
    }

    @Test func lineBreaksAndControlCharactersAreEscaped() {
        #expect(escapedForLog("a\nb\tc\rd") == #"a\nb\tc\rd"#)
        #expect(escapedForLog("bell\u{07}esc\u{1b}[2Jdel\u{7f}c1\u{85}") == #"bell\x07esc\x1b[2Jdel\x7fc1\x85"#)
        #expect(escapedForLog("line\u{2028}para\u{2029}") == #"line\u{2028}para\u{2029}"#)
    }

    /// A backslash in a name cannot pass for one of our escapes.
    @Test func backslashesAreDoubled() {
        #expect(escapedForLog(#"C:\new"#) == #"C:\\new"#)
        #expect(escapedForLog(#"a\nb"#) != escapedForLog("a\nb"))
    }
}
