import Testing

@testable import AnnounceDaemon
@testable import AnnounceModel

/// Busy and lost devices, and the retry backoff, on the daemon's clock (no device, no waiting).
@Suite struct DeviceSupervisorTests {
    @Test func aBusyDeviceIsRetriedWithBackoffThatDoublesUpToFourSeconds() throws {
        var devices = DeviceSupervisor()
        var now = 100.0
        var gaps: [Double] = []
        for _ in 0..<7 {
            let wait = devices.failed(.busy(device: "hw:0", reason: "held by pid 1"), failsWhenBusy: false, now: now)
            #expect(wait == .busy(reason: "held by pid 1"))
            let retryAt = try #require(devices.retryAt)
            gaps.append(retryAt - now)
            let early = devices.retryIsDue(now: retryAt - 0.001)
            let due = devices.retryIsDue(now: retryAt)
            let again = devices.retryIsDue(now: retryAt)
            #expect(!early && due && !again, "due once, at its time")
            now = retryAt
        }
        #expect(gaps == [0.25, 0.5, 1, 2, 4, 4, 4])
        #expect(devices.busyReason == "held by pid 1")
        // It works again: the next trouble starts from the first delay.
        let wasLost = devices.works("hw:0")
        #expect(!wasLost, "it was busy, not lost")
        _ = devices.failed(.busy(device: "hw:0", reason: "held by pid 2"), failsWhenBusy: false, now: now)
        #expect(devices.retryAt == now + 0.25)
    }

    @Test func aRetryAlreadyDueIsNotPushedBackByAnotherFailure() {
        var devices = DeviceSupervisor()
        _ = devices.failed(.busy(device: "a", reason: "x"), failsWhenBusy: false, now: 0)
        _ = devices.failed(.lost(device: "b", reason: "gone"), failsWhenBusy: false, now: 0.2)
        #expect(devices.retryAt == 0.25)
    }

    @Test func busyWithIfBusyFailAndAnUnknownDeviceAreFinal() {
        var devices = DeviceSupervisor()
        let busy = devices.failed(.busy(device: "hw:0", reason: "x"), failsWhenBusy: true, now: 0)
        let unknown = devices.failed(
            .unavailable(device: "hw:9", reason: "no such device"), failsWhenBusy: false, now: 0)
        #expect(busy == nil && unknown == nil)
        #expect(devices.retryAt == nil, "nothing to retry")
    }

    @Test func aMultiRoutePlayLosesTheDeviceThatFailedNotItsRoute() {
        var devices = DeviceSupervisor()
        _ = devices.opened("hw:0")
        _ = devices.opened("usb")
        let lost = devices.failed(.lost(device: "usb", reason: "unplugged"), failsWhenBusy: false, now: 0)
        #expect(lost == .lost(reason: "unplugged", newlyLost: true))
        #expect(devices.lost == ["usb"])
        #expect(devices.isKnown("usb") && devices.waitReason(for: ["hw:0", "usb"]).reason == .deviceLost)
        #expect(devices.works("usb") && devices.lost.isEmpty, "back under its own name")
    }

    @Test func aLostDeviceIsWaitedForUntilItWorks() {
        var devices = DeviceSupervisor()
        _ = devices.opened("usb")
        let lost = devices.failed(.lost(device: "usb", reason: "unplugged"), failsWhenBusy: false, now: 0)
        #expect(lost == .lost(reason: "unplugged", newlyLost: true))
        #expect(devices.waitReason(for: ["usb"]) == (.deviceLost, nil))
        #expect(devices.isKnown("usb") && !devices.isKnown("hw:1"))
        // Still gone at the retry (unavailable, or taken meanwhile): keep waiting, no news.
        let unavailable = devices.failed(.unavailable(device: "usb", reason: "gone"), failsWhenBusy: false, now: 0.25)
        let taken = devices.failed(.busy(device: "usb", reason: "held"), failsWhenBusy: true, now: 0.25)
        let again = devices.failed(.lost(device: "usb", reason: "unplugged"), failsWhenBusy: false, now: 0.3)
        #expect(unavailable == .stillLost && taken == .stillLost)
        #expect(again == .lost(reason: "unplugged", newlyLost: false))
        let back = devices.works("usb")
        let backAgain = devices.works("usb")
        #expect(back && !backAgain, "back, once")
        #expect(devices.waitReason(for: ["usb"]).reason == .deviceBusy)
    }

    @Test func eachWaitHoldsTheQueueForItsReason() {
        #expect(DeviceSupervisor.Wait.busy(reason: "x").hold == .deviceBusy)
        #expect(DeviceSupervisor.Wait.lost(reason: "x", newlyLost: true).hold == .deviceLost)
        #expect(DeviceSupervisor.Wait.stillLost.hold == .deviceLost)
    }

    @Test func theDaemonsOwnDeviceClosesAfterItsGraceUnlessSomethingPlays() {
        var devices = DeviceSupervisor()
        let first = devices.opened("default")
        let again = devices.opened("default")
        #expect(first && !again, "opened once")
        devices.nothingPlays(own: "default", grace: 0.1, now: 5)
        devices.nothingPlays(own: "default", grace: 0.1, now: 5.05)
        #expect(devices.closeAt == 5.1, "the grace runs from when the last play ended")
        devices.playStarts()
        #expect(devices.closeAt == nil)
        devices.nothingPlays(own: "default", grace: 0.1, now: 6)
        let early = devices.closeIsDue(now: 6.05)
        let due = devices.closeIsDue(now: 6.1)
        let twice = devices.closeIsDue(now: 6.2)
        #expect(!early && due && !twice)
        let closed = devices.closed("default")
        let closedAgain = devices.closed("default")
        #expect(closed && !closedAgain && devices.open.isEmpty)
        devices.nothingPlays(own: "default", grace: 0.1, now: 7)
        #expect(devices.closeAt == nil, "a closed device has no grace to wait for")
        #expect(devices.isKnown("default"), "it has played here")
    }
}
