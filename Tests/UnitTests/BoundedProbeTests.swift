import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

@Suite("BoundedProbe: a device check the control thread waits for only so long")
struct BoundedProbeTests {
    @Test("a check that never finishes (a sound server that accepts and never answers) lets the device pass")
    func aHungCheckPasses() throws {
        let release = CountingSemaphore()
        try BoundedProbe.check(within: 0.05) { () throws(AnnounceError) in release.wait() }
        release.signal()  // the abandoned check ends by itself
    }

    @Test("a check that fails in time fails the device with its own error")
    func aFailureInTimeIsKept() {
        #expect(throws: AnnounceError.deviceUnavailable(device: "jack", reason: "no server")) {
            try BoundedProbe.check(within: 5) { () throws(AnnounceError) in
                throw .deviceUnavailable(device: "jack", reason: "no server")
            }
        }
    }
}
