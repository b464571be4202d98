import AnnounceModel
import Testing

/// A live stream's reconnection backoff, its request rules and its config key.
@Suite struct LiveStreamTests {
    /// Tries that fail at once, from a drop at 0: when each is made, until the policy gives up.
    static func tries(limit: Double) -> [Double] {
        var backoff = ReconnectBackoff(limit: limit)
        var now = 0.0
        var times: [Double] = []
        while case .retry(let delay) = backoff.dropped(at: now, audioSince: times.isEmpty ? -1 : nil) {
            now += delay
            times.append(now)
            #expect(times.count < 100)
        }
        return times
    }

    @Test func theDelaysDoubleToACapAndTheLastTryIsAtTheLimit() {
        #expect(Self.tries(limit: 2) == [0.5, 1.5, 2])
        #expect(Self.tries(limit: 60) == [0.5, 1.5, 3.5, 7.5, 15.5, 23.5, 31.5, 39.5, 47.5, 55.5, 60])
    }

    @Test func aConnectionThatPlayedLongEnoughStartsAFreshOutage() {
        var backoff = ReconnectBackoff(limit: 5)
        #expect(backoff.dropped(at: 100, audioSince: 0) == .retry(after: 0.5))
        #expect(backoff.dropped(at: 100.5, audioSince: nil) == .retry(after: 1))
        // Back for 20 s: the next drop waits the first delay again, and the limit counts anew.
        #expect(backoff.dropped(at: 121.5, audioSince: 101.5) == .retry(after: 0.5))
        #expect(backoff.dropped(at: 126, audioSince: nil) == .retry(after: 0.5))
        #expect(backoff.dropped(at: 126.5, audioSince: nil) == .giveUp)
    }

    @Test func aStreamThatDropsEveryFewSecondsStillGivesUp() {
        var backoff = ReconnectBackoff(limit: 10)
        var now = 0.0
        var decision = backoff.dropped(at: now, audioSince: nil)
        // Each connection plays 3 s (less than steadyAfter) and drops.
        while case .retry(let delay) = decision {
            now += delay + 3
            decision = backoff.dropped(at: now, audioSince: now - 3)
        }
        #expect(now >= 10 && now < 20)
    }

    @Test func aStreamClipIsAURLThatNeitherSeeksNorChangesPace() {
        func problem(_ change: (inout Clip) -> Void) -> ItemProblem? {
            var clip = Clip(path: "http://radio/x", stream: LiveStream(url: "http://radio/x", seconds: 60))
            change(&clip)
            return ItemRequest(clip: clip).problem
        }
        #expect(problem { _ in } == nil)
        #expect(problem { $0.stream?.url = "HTTPS://Radio:8000/live?x=1" } == nil)
        #expect(problem { $0.stream?.url = "file:///x.mp3" } == .stream(.scheme("file:///x.mp3")))
        #expect(problem { $0.stream?.url = "http:///x" } == .stream(.url))
        #expect(problem { $0.stream?.seconds = 0 } == .stream(.seconds))
        #expect(problem { $0.stream?.seconds = .nan } == .stream(.seconds))
        #expect(problem { $0.loops = -1 } == .stream(.seeks))
        #expect(problem { $0.start = 5 } == .stream(.seeks))
        #expect(problem { $0.rate = 2 } == .stream(.changesPace))
        #expect(problem { $0.skipSilence = true } == .stream(.changesPace))
        #expect(problem { $0.pitch = 3 } == nil)
        #expect(problem { $0.media = "abc" } == .stream(.notOneInput))
        #expect(ItemRequest(clip: Clip(path: "http://radio/x")).problem == .relativePath("http://radio/x"))
    }

    @Test func theDurationIsFramesAtTheStreamsRate() {
        #expect(LiveStream(url: "http://x/", seconds: 1.5).frames(atRate: 48000) == 72000)
        #expect(LiveStream(url: "http://x/").frames(atRate: 48000) == nil)
    }

    @Test func theReconnectLimitComesFromTheConfigFileWithinItsRange() {
        #expect(UserConfiguration().reconnectLimit == 60)
        let (set, none) = UserConfiguration.parse("reconnect-limit = 5m\n", name: "c")
        #expect(none.isEmpty && set.reconnectLimit == 300)
        let (bad, warnings) = UserConfiguration.parse("reconnect-limit = 2h\n", name: "c")
        #expect(bad.reconnectLimit == 60)
        #expect(warnings == ["c:1: reconnect-limit must be a time of 1s to 1h, like 1m, not '2h'"])
    }
}
