import Testing

@testable import AnnounceModel

private func stream(_ id: ItemID, at arrival: Double = 0, tag: String? = nil, expireAfter: Double? = nil) -> QueueItem {
    QueueItem(
        id: id, clip: Clip(path: "/sounds/\(id).wav"), tag: tag, arrival: arrival, expireAfter: expireAfter,
        session: AudioSession(category: .ambient))
}

/// Effects as short lines, so a test states the exact sequence it expects.
private func describe(_ effects: [MixedLaneEffect]) -> [String] {
    effects.map { effect in
        switch effect {
        case .play(let item, let alert):
            "play \(item.id)" + (item.heardFrames > 0 ? " from \(item.heardFrames)" : "") + (alert ? " (alert)" : "")
        case .stop(let id): "stop \(id)"
        case .persist(let item): "persist \(item.id) at \(item.heardFrames)"
        case .suspend(let id): "suspend \(id)"
        case .finish(let item, let outcome):
            "finish \(item.id): \(outcome.kind.rawValue)" + (outcome.reason.map { " (\($0))" } ?? "")
        }
    }
}

@Suite struct MixedLaneTests {
    @Test func aStreamPlaysAtOnceAndEndsPlayed() {
        var lane = MixedLane()
        lane.add(stream("a"), alert: false)
        #expect(describe(lane.play("a")) == ["play a"])
        #expect(describe(lane.play("a")) == [], "a play in progress is not started twice")
        #expect(lane.isPlaying)
        let ended = lane.playEnded("a", heard: 480, total: 480, end: .finished, mayPlay: true, stopping: false) { _ in
            false
        }
        #expect(describe(ended) == ["finish a: played"])
        #expect(lane.isEmpty)
    }

    @Test func endingAPlayingStreamStopsItAndFinishesWithThatOutcomeOnce() {
        var lane = MixedLane()
        lane.add(stream("a", tag: "news"), alert: false)
        _ = lane.play("a")
        #expect(
            describe(lane.end(where: { $0.tag == "news" }, Outcome(.replaced, reason: "replaced by b"))) == ["stop a"])
        #expect(lane["a"] != nil, "still there until its play ends")
        // The stop reaches the play as it finished on its own: the outcome asked for wins.
        let ended = lane.playEnded("a", heard: 100, total: nil, end: .finished, mayPlay: true, stopping: false) { _ in
            false
        }
        #expect(describe(ended) == ["finish a: replaced (replaced by b)"])
        #expect(describe(lane.end("a", Outcome(.cancelled))) == [], "final once")
    }

    @Test func anInterruptedStreamKeepsWhatWasHeardAndResumesFromThere() {
        var lane = MixedLane()
        lane.add(stream("a"), alert: false)
        _ = lane.play("a")
        #expect(describe(lane.interrupt("a")) == ["stop a"])
        let ended = lane.playEnded("a", heard: 300, total: 1000, end: .stopped, mayPlay: false, stopping: false) { _ in
            false
        }
        #expect(describe(ended) == ["persist a at 300"])
        #expect(lane["a"]?.waiting == .interrupted)
        #expect(describe(lane.resume("a")) == ["play a from 300"])
        #expect(describe(lane.resume("a")) == [], "only a stream that waits for the interruption")
    }

    @Test func anAlertIsNeverSpooled() {
        var lane = MixedLane()
        lane.add(stream("ding"), alert: true)
        #expect(describe(lane.play("ding")) == ["play ding (alert)"])
        _ = lane.interrupt("ding")
        let ended = lane.playEnded("ding", heard: 10, total: nil, end: .stopped, mayPlay: true, stopping: false) { _ in
            false
        }
        #expect(describe(ended) == ["play ding from 10 (alert)"])
    }

    @Test func aBusyDeviceIsWaitedForUntilTheRetryOrTheExpiry() {
        var lane = MixedLane()
        lane.add(stream("a", at: 10, expireAfter: 0.6), alert: false)
        lane.add(stream("b", at: 10), alert: false)
        _ = lane.play("a")
        _ = lane.play("b")
        var asked: [ItemID] = []
        for id: ItemID in ["a", "b"] {
            let ended = lane.playEnded(
                id, heard: 0, total: nil, end: .failed(code: 69, message: "busy"), mayPlay: true,
                stopping: false
            ) {
                asked.append($0.id)
                return true
            }
            #expect(describe(ended) == ["suspend \(id)", "persist \(id) at 0"])
        }
        #expect(asked == ["a", "b"])
        #expect(describe(lane.retryDevice(now: 10.25) { _ in false }) == ["play a", "play b"])
        for id: ItemID in ["a", "b"] {
            _ = lane.playEnded(
                id, heard: 0, total: nil, end: .failed(code: 69, message: "busy"), mayPlay: true, stopping: false
            ) { _ in true }
        }
        // At the next retry a's --expire has passed; b waits on, held by a session meanwhile.
        #expect(describe(lane.retryDevice(now: 10.75) { $0 == "b" }) == ["finish a: expired (not started within 0.6s)"])
        #expect(lane["b"]?.waiting == .interrupted)
    }

    @Test func aFailureThatIsNotTheDevicesEndsIt() {
        var lane = MixedLane()
        lane.add(stream("a"), alert: false)
        _ = lane.play("a")
        let ended = lane.playEnded(
            "a", heard: 0, total: nil, end: .failed(code: 65, message: "not audio"), mayPlay: true,
            stopping: false
        ) { _ in false }
        #expect(describe(ended) == ["finish a: failed (not audio)"])
    }

    @Test func anEndAskedForIsNotMistakenForDeviceTrouble() {
        var lane = MixedLane()
        lane.add(stream("a"), alert: false)
        _ = lane.play("a")
        _ = lane.end("a", Outcome(.cancelled, reason: "cancelled"))
        var asked = false
        let ended = lane.playEnded(
            "a", heard: 0, total: nil, end: .failed(code: 69, message: "lost"), mayPlay: true,
            stopping: false
        ) { _ in
            asked = true
            return true
        }
        #expect(describe(ended) == ["finish a: cancelled (cancelled)"])
        #expect(!asked, "the device is not waited for on behalf of an item that is ending")
    }

    @Test func stoppingTheDaemonStopsEveryPlayAndKeepsEachPlace() {
        var lane = MixedLane()
        for id: ItemID in ["a", "b"] { lane.add(stream(id, at: id == "a" ? 1 : 0), alert: false) }
        _ = lane.play("a")
        _ = lane.play("b")
        #expect(describe(lane.stopAll()) == ["stop b", "stop a"], "by arrival")
        let ended = lane.playEnded("a", heard: 5, total: nil, end: .stopped, mayPlay: true, stopping: true) { _ in false
        }
        #expect(describe(ended) == ["persist a at 5"], "not played again while the daemon stops")
    }

    /// A seeded random walk over every call, as the daemon makes them: each stream's effects
    /// must make sense in order (never played twice at once, stopped only while playing,
    /// finished once and only when not playing), and every stream ends up final.
    @Test(arguments: 0..<20 as Range<UInt64>) func randomWalkKeepsEveryStreamConsistent(seed: UInt64) {
        var generator = SplitMix64(state: seed)
        var lane = MixedLane()
        var playing: Set<ItemID> = []
        var finished: Set<ItemID> = []
        var known: [ItemID] = []
        var now = 0.0
        func check(_ effects: [MixedLaneEffect]) {
            for effect in effects {
                switch effect {
                case .play(let item, _):
                    #expect(!playing.contains(item.id) && !finished.contains(item.id), "seed \(seed): play \(item.id)")
                    playing.insert(item.id)
                case .stop(let id):
                    #expect(playing.contains(id), "seed \(seed): stop \(id) while not playing")
                case .persist(let item):
                    #expect(!finished.contains(item.id), "seed \(seed): persist \(item.id) after its end")
                case .suspend(let id):
                    #expect(!playing.contains(id) && !finished.contains(id))
                case .finish(let item, _):
                    #expect(!playing.contains(item.id), "seed \(seed): \(item.id) finished while playing")
                    #expect(finished.insert(item.id).inserted, "seed \(seed): \(item.id) finished twice")
                    #expect(lane[item.id] == nil)
                }
            }
        }
        for step in 0..<400 {
            now += Double.random(in: 0...0.3, using: &generator)
            let id = known.randomElement(using: &generator) ?? "none"
            switch Int.random(in: 0..<9, using: &generator) {
            case 0:
                let new: ItemID = "s\(step)"
                known.append(new)
                lane.add(
                    stream(
                        new, at: now, tag: ["t0", "t1"].randomElement(using: &generator),
                        expireAfter: Bool.random(using: &generator) ? 0.5 : nil), alert: Bool.random(using: &generator))
                check(lane.play(new))
            case 1: check(lane.interrupt(id))
            case 2: check(lane.resume(id))
            case 3: check(lane.end(id, Outcome(.cancelled)))
            case 4: check(lane.end(where: { $0.tag == "t0" }, Outcome(.replaced)))
            case 5: check(lane.retryDevice(now: now) { _ in Int.random(in: 0..<4, using: &generator) == 0 })
            case 6: check(lane.play(id))
            default:
                // A play in progress ends the way plays end.
                guard let ending = playing.sorted().randomElement(using: &generator) else { continue }
                playing.remove(ending)
                let end: PlaybackEnd =
                    switch Int.random(in: 0..<5, using: &generator) {
                    case 0: .finished
                    case 1: .stopped
                    case 2: .silenced(reason: "quiet mode")
                    default: .failed(code: 69, message: "busy")
                    }
                check(
                    lane.playEnded(
                        ending, heard: Int64.random(in: 0...100, using: &generator), total: nil, end: end,
                        mayPlay: Bool.random(using: &generator), stopping: false
                    ) { _ in Bool.random(using: &generator) })
            }
            #expect(lane.isPlaying == !playing.isEmpty, "seed \(seed), step \(step)")
        }
        // Everything ends: plays end, then what is left is cancelled.
        while let ending = playing.first {
            playing.remove(ending)
            check(
                lane.playEnded(ending, heard: 0, total: nil, end: .stopped, mayPlay: false, stopping: false) { _ in
                    false
                })
        }
        for id in known { check(lane.end(id, Outcome(.cancelled))) }
        #expect(lane.isEmpty && finished == Set(known), "seed \(seed): every stream final once")
    }
}
