import Testing

@testable import AnnounceDaemon
@testable import AnnounceModel

@Suite struct PlayMeterTests {
    @Test func eachQuarterMarkIsAnnouncedOnceAndOnlyGoingForward() {
        var meter = PlayMeter()
        let marks = [10, 30, 40, 55, 49, 80, 99, 100].map { meter.newMark("a", heard: Int64($0), total: 100) }
        #expect(marks == [0, 25, 0, 50, 0, 75, 0, 0])
        #expect(meter.newMark("b", heard: 50, total: nil) == 0, "no length, no marks")
        meter.forget("a")
        #expect(meter.newMark("a", heard: 30, total: 100) == 25, "a final item's marks go with it")
    }

    @Test func secondsNeedThePlaysRateAndTheLastPlayIsKept() {
        var meter = PlayMeter()
        #expect(meter.seconds(48_000, of: "a") == nil)
        meter.started("a", rate: 48_000)
        #expect(meter.seconds(72_000, of: "a") == 1.5)
        meter.ended("a", rate: nil, details: PlayDetails(devices: DeviceList(["hw:0", "hw:1"])))
        #expect(meter.lastPlay(of: "a")?.devices.description == "hw:0, hw:1")
        meter.started("a", rate: 44_100)
        #expect(meter.seconds(44_100, of: "a") == 1, "its next play's rate")
        meter.forget("a")
        #expect(meter.seconds(1, of: "a") == nil && meter.lastPlay(of: "a") == nil)
    }
}
