@testable import AnnounceKit
import Testing

@Suite("AudioEnvironment: which sound-server variables a device opens with")
struct AudioEnvironmentRuleTests {
    let daemon = ["PULSE_SERVER": "unix:/daemon/native", "XDG_RUNTIME_DIR": "/run/daemon"]

    @Test("a request without variables (cron) gets the daemon's")
    func cron() {
        #expect(AudioEnvironment.effective(nil, daemon: daemon, userRuntimeDirectory: "/run/user/7") == daemon)
    }

    @Test("a request's set replaces the daemon's whole set; a missing XDG_RUNTIME_DIR is the user's logind directory")
    func caller() {
        let chosen = AudioEnvironment.effective(["PULSE_COOKIE": "/c"], daemon: daemon, userRuntimeDirectory: "/run/user/7")
        #expect(chosen == ["PULSE_COOKIE": "/c", "XDG_RUNTIME_DIR": "/run/user/7"])
    }

    @Test("a daemon started with env -i gets /run/user/UID when that is the user's own, and nothing else")
    func emptyDaemon() {
        #expect(AudioEnvironment.effective(nil, daemon: [:], userRuntimeDirectory: "/run/user/7") == ["XDG_RUNTIME_DIR": "/run/user/7"])
        #expect(AudioEnvironment.effective(nil, daemon: [:], userRuntimeDirectory: nil) == [:])
    }

    @Test("the client sends only the listed variables that are set and not empty")
    func callerVariables() {
        let environment = ["PULSE_SERVER": "unix:/p", "PULSE_SINK": "", "HOME": "/home/u"]
        #expect(AudioEnvironment.caller { environment[$0] } == ["PULSE_SERVER": "unix:/p"])
        #expect(AudioEnvironment.caller { _ in nil } == nil)
    }
}
