import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

// The clock is just the `now` each call gets; tests move it by hand.

private func item(
    _ id: ItemID, _ priority: Priority = .normal, at arrival: Double = 0, interrupts: Bool = true,
    onInterrupt: InterruptAction = .resume, dropAfter: Double = 0.8, tag: String? = nil,
    eligibleAt: Double? = nil, expireAfter: Double? = nil
) -> QueueItem {
    QueueItem(
        id: id, clip: Clip(path: "/sounds/\(id).wav"), priority: priority, interrupts: interrupts,
        onInterrupt: onInterrupt, dropAfter: dropAfter, tag: tag, arrival: arrival,
        eligibleAt: eligibleAt, expireAfter: expireAfter)
}

private func text(_ reason: StopReason) -> String {
    switch reason {
    case .preempted(by: let id): "preempted by \(id)"
    case .paused: "paused"
    case .held(let why): "held: \(why)"
    case .skipped: "skipped"
    case .cancelled: "cancelled"
    case .replaced(by: let id): "replaced by \(id)"
    case .stopped: "stopped"
    }
}

/// Effects as short lines, so a test can state the exact sequence it expects.
private func describe(_ effects: [SchedulerEffect]) -> [String] {
    effects.map { effect in
        switch effect {
        case .play(let item):
            item.heardFrames > 0 ? "play \(item.id) from \(item.heardFrames)" : "play \(item.id)"
        case .persist(let item):
            "persist \(item.id)"
        case .stopPlayback(let id, let reason):
            "stop \(id): \(text(reason))"
        case .interrupted(let item, let reason):
            "interrupted \(item.id): \(text(reason))"
        case .finish(let item, let outcome):
            "finish \(item.id): \(outcome.kind.rawValue)" + (outcome.code.map { " \($0)" } ?? "")
                + (outcome.reason.map { " (\($0))" } ?? "")
        }
    }
}

extension Scheduler {
    /// The playing item ends on its own.
    fileprivate mutating func endPlaying(
        _ end: PlaybackEnd = .finished, heard: Int64 = 0, total: Int64? = nil,
        now: Double = 0
    ) -> [String] {
        describe(playbackEnded(id: playing?.id ?? "", heardFrames: heard, totalFrames: total, end: end, now: now))
    }

    fileprivate mutating func add(_ item: QueueItem, replace: Bool = false, now: Double = 0) -> [String] {
        describe(enqueue(item, replace: replace, now: now))
    }

    /// Plays everything to the end; returns the ids in the order they played.
    fileprivate mutating func playAll(now: Double = 0) -> [ItemID] {
        var played: [ItemID] = []
        while let current = playing {
            played.append(current.id)
            _ = endPlaying(now: now)
        }
        return played
    }
}

@Suite struct SchedulerTests {
    // MARK: Acceptance

    @Test func aRequestBecomesAnItemWithTheDefaultsAndAPastTimeIsNow() {
        let clip = Clip(path: "/a.wav")
        let plain = QueueItem(request: ItemRequest(clip: clip), id: "a", now: 100)
        #expect(
            plain
                == QueueItem(
                    id: "a", clip: clip, priority: .normal, interrupts: true, onInterrupt: .resume,
                    dropAfter: 0.8, arrival: 100))
        let delayed = QueueItem(
            request: ItemRequest(clip: clip, priority: .high, delay: 5, expire: 2), id: "b", now: 100)
        #expect(delayed.eligibleAt == 105 && delayed.expiresAt == 107 && delayed.priority == .high)
        let past = QueueItem(request: ItemRequest(clip: clip, at: 99, delay: 5), id: "c", now: 100)
        #expect(past.eligibleAt == nil, "--at wins over --delay; a time already passed is ready at once")
    }

    // MARK: Order

    @Test func ordersByPriorityThenArrival() {
        var scheduler = Scheduler()
        #expect(scheduler.pause(now: 0).isEmpty)
        let arrivals: [(ItemID, Priority)] = [
            ("a", .low), ("b", .normal), ("c", .high), ("d", .critical),
            ("e", .normal), ("f", .low)
        ]
        for (id, priority) in arrivals {
            #expect(scheduler.add(item(id, priority)) == ["persist \(id)"])
        }
        #expect(scheduler.ready.map(\.id) == ["d", "c", "b", "e", "a", "f"])
        #expect(scheduler.ready.map(\.sequence) == [4, 3, 2, 5, 1, 6])
        #expect(describe(scheduler.resume(now: 1)) == ["play d"])
        #expect(scheduler.playAll() == ["d", "c", "b", "e", "a", "f"])
        #expect(scheduler.count == 0)
    }

    @Test func keepsArrivalOrderWithinALevelForAThousandItems() {
        var scheduler = Scheduler()
        _ = scheduler.pause(now: 0)
        let ids = (1...1000).map { ItemID("n\($0)") }
        for id in ids {
            _ = scheduler.enqueue(item(id, .normal), now: 0)
        }
        #expect(scheduler.nextSequence == 1001)
        #expect(scheduler.ready.map(\.id) == ids)
        _ = scheduler.resume(now: 0)
        #expect(scheduler.playAll() == ids)
    }

    @Test func acceptsAnItemWithExactEffects() {
        var scheduler = Scheduler()
        var queued = item("a", at: 5)
        queued.sequence = 1
        var playing = queued
        playing.started = true
        #expect(scheduler.enqueue(item("a", at: 5), now: 5) == [.persist(queued), .play(playing)])
        #expect(scheduler.playing == playing)
        #expect(scheduler.nextSequence == 2)
        #expect(scheduler.count == 1)
    }

    @Test func ignoresADuplicateLiveID() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b"))
        #expect(scheduler.add(item("b", .high)).isEmpty)
        #expect(scheduler.add(item("a", .critical)).isEmpty)
        #expect(scheduler.count == 2)
        #expect(scheduler.nextSequence == 3)
    }

    // MARK: Preemption

    @Test func equalPriorityDoesNotInterrupt() {
        var scheduler = Scheduler()
        #expect(scheduler.add(item("a")) == ["persist a", "play a"])
        #expect(scheduler.add(item("b", at: 1), now: 1) == ["persist b"])
        #expect(!scheduler.isStopping)
        #expect(scheduler.endPlaying(now: 2) == ["finish a: played", "play b"])
    }

    @Test func higherPriorityPreemptsAndThePreemptedItemResumes() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        var bQueued = item("b", .high, at: 1)
        bQueued.sequence = 2
        #expect(
            scheduler.enqueue(item("b", .high, at: 1), now: 1)
                == [.persist(bQueued), .stopPlayback(id: "a", reason: .preempted(by: "b"))])
        #expect(scheduler.isStopping)
        #expect(scheduler.playing?.id == "a")

        var aInterrupted = item("a")
        aInterrupted.sequence = 1
        aInterrupted.started = true
        aInterrupted.interrupted = true
        aInterrupted.heardFrames = 300
        aInterrupted.totalFrames = 1000
        var bPlaying = bQueued
        bPlaying.started = true
        #expect(
            scheduler.playbackEnded(id: "a", heardFrames: 300, totalFrames: 1000, end: .stopped, now: 2)
                == [.interrupted(aInterrupted, reason: .preempted(by: "b")), .persist(aInterrupted), .play(bPlaying)])
        #expect(!scheduler.isStopping)
        #expect(scheduler.ready == [aInterrupted])

        var bPlayed = bPlaying
        bPlayed.heardFrames = 500
        bPlayed.totalFrames = 500
        var aResumed = aInterrupted
        aResumed.interrupted = false
        #expect(
            scheduler.playbackEnded(id: "b", heardFrames: 500, totalFrames: 500, end: .finished, now: 3)
                == [.finish(bPlayed, Outcome(.played)), .play(aResumed)])
    }

    @Test func noInterruptItemWaitsForThePlayingOne() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", .low))
        #expect(scheduler.add(item("b", .critical, interrupts: false)) == ["persist b"])
        #expect(!scheduler.isStopping)
        #expect(scheduler.endPlaying() == ["finish a: played", "play b"])
    }

    @Test func criticalIsNeverPreempted() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("h", .high))
        #expect(scheduler.add(item("c1", .critical)) == ["persist c1", "stop h: preempted by c1"])
        #expect(scheduler.endPlaying(.stopped, heard: 10) == ["interrupted h: preempted by c1", "persist h", "play c1"])
        #expect(scheduler.add(item("c2", .critical)) == ["persist c2"])
        #expect(scheduler.advance(now: 1).isEmpty)
        #expect(scheduler.playAll() == ["c1", "c2", "h"])
    }

    @Test func preemptedItemGoesAheadOfLaterItemsOfItsClass() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("c"))
        _ = scheduler.add(item("b", .high))
        #expect(scheduler.endPlaying(.stopped, heard: 100) == ["interrupted a: preempted by b", "persist a", "play b"])
        #expect(scheduler.ready.map(\.id) == ["a", "c"])
        #expect(scheduler.ready.first?.interrupted == true)
        #expect(scheduler.endPlaying() == ["finish b: played", "play a from 100"])
        #expect(scheduler.playing?.interrupted == false)
        #expect(scheduler.playAll() == ["a", "c"])
    }

    @Test func preemptedItemGoesAheadOfAnEarlierArrivalThatBecameEligibleWhileItPlayed() {
        var scheduler = Scheduler()
        #expect(scheduler.add(item("s", eligibleAt: 5)) == ["persist s"])
        _ = scheduler.add(item("a"))
        #expect(scheduler.advance(now: 5).isEmpty)
        #expect(scheduler.ready.map(\.id) == ["s"])
        _ = scheduler.add(item("h", .high, at: 6), now: 6)
        _ = scheduler.endPlaying(.stopped, heard: 100, now: 6)
        #expect(scheduler.ready.map(\.id) == ["a", "s"])
        #expect(scheduler.playAll(now: 7) == ["h", "a", "s"])
    }

    @Test(arguments: [
        (Int64(790), Int64?.some(1000), ["interrupted a: preempted by b", "persist a", "play b"]),
        (Int64(800), Int64?.some(1000), ["finish a: dropped (preempted by b after 80% heard)", "play b"]),
        (Int64(850), Int64?.some(1000), ["finish a: dropped (preempted by b after 85% heard)", "play b"]),
        (Int64(5000), Int64?.some(1000), ["finish a: dropped (preempted by b after 100% heard)", "play b"]),
        (Int64(999_999), Int64?.none, ["interrupted a: preempted by b", "persist a", "play b"]),
        (Int64(999_999), Int64?.some(0), ["interrupted a: preempted by b", "persist a", "play b"])
    ])
    func dropsAPreemptedItemOnceEnoughWasHeard(heard: Int64, total: Int64?, expected: [String]) {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b", .high))
        #expect(scheduler.endPlaying(.stopped, heard: heard, total: total) == expected)
    }

    /// Speech counts whole sentences: 3 of 4 heard (75%) resumes even when 90% of its frames
    /// were heard; 4 of 5 (80%) drops even when fewer frames were.
    @Test func aSourcesOwnHeardFractionDecidesTheDropRule() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b", .high))
        #expect(
            describe(
                scheduler.playbackEnded(
                    id: "a", heardFrames: 900, totalFrames: 1000, heardFraction: 0.75,
                    end: .stopped, now: 0)) == ["interrupted a: preempted by b", "persist a", "play b"])
        _ = scheduler.endPlaying()
        _ = scheduler.add(item("c", .high))
        #expect(
            describe(
                scheduler.playbackEnded(
                    id: "a", heardFrames: 0, totalFrames: nil, heardFraction: 0.8,
                    end: .stopped, now: 0)) == ["finish a: dropped (preempted by c after 80% heard)", "play c"])
    }

    @Test func heardFramesAddUpAcrossPlaysForTheDropRule() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", .low))
        _ = scheduler.add(item("b", .normal))
        #expect(
            scheduler.endPlaying(.stopped, heard: 500, total: 1000).prefix(2)
                == ["interrupted a: preempted by b", "persist a"])
        _ = scheduler.add(item("c", .high))
        _ = scheduler.endPlaying(.stopped, heard: 10, total: 1000)
        #expect(scheduler.endPlaying() == ["finish c: played", "play b from 10"])
        #expect(scheduler.endPlaying() == ["finish b: played", "play a from 500"])
        _ = scheduler.add(item("d", .high))
        #expect(
            scheduler.endPlaying(.stopped, heard: 300, total: 1000)
                == ["finish a: dropped (preempted by d after 80% heard)", "play d"])
    }

    @Test func onInterruptRestartStartsOver() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", onInterrupt: .restart))
        _ = scheduler.add(item("b", .high))
        #expect(
            scheduler.endPlaying(.stopped, heard: 300, total: 1000)
                == ["interrupted a: preempted by b", "persist a", "play b"])
        #expect(scheduler.ready.first?.heardFrames == 0)
        #expect(scheduler.ready.first?.interrupted == true)
        #expect(scheduler.endPlaying() == ["finish b: played", "play a"])
    }

    @Test func onInterruptDropEndsIt() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", onInterrupt: .drop))
        _ = scheduler.add(item("b", .high))
        #expect(
            scheduler.endPlaying(.stopped, heard: 10, total: 1000) == ["finish a: dropped (preempted by b)", "play b"])
        #expect(scheduler.count == 1)
    }

    // MARK: Replace

    @Test func replaceCancelsQueuedAndScheduledItemsWithTheTag() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("q1", tag: "status"))
        _ = scheduler.add(item("s1", tag: "status", eligibleAt: 50))
        _ = scheduler.add(item("other", tag: "mail"))
        #expect(scheduler.add(item("q2", tag: "status")) == ["persist q2"])
        #expect(
            scheduler.add(item("q3", tag: "status"), replace: true)
                == [
                    "persist q3", "finish q1: replaced (replaced by q3)", "finish q2: replaced (replaced by q3)",
                    "finish s1: replaced (replaced by q3)"
                ])
        #expect(scheduler.ready.map(\.id) == ["other", "q3"])
        #expect(scheduler.scheduled.isEmpty)
        #expect(scheduler.nextDeadline == nil)
    }

    @Test func replaceStopsThePlayingItemWithTheTag() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", tag: "status"))
        #expect(scheduler.add(item("b", tag: "status"), replace: true) == ["persist b", "stop a: replaced by b"])
        #expect(
            scheduler.add(item("c", tag: "status"), replace: true)
                == ["persist c", "finish b: replaced (replaced by c)"])
        #expect(scheduler.endPlaying(.stopped, heard: 10) == ["finish a: replaced (replaced by b)", "play c"])
    }

    @Test func replaceOverridesAPendingPreemption() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", .low, tag: "status"))
        #expect(scheduler.add(item("h", .high)) == ["persist h", "stop a: preempted by h"])
        #expect(scheduler.add(item("n", tag: "status"), replace: true) == ["persist n"])
        #expect(scheduler.endPlaying(.stopped, heard: 10) == ["finish a: replaced (replaced by n)", "play h"])
    }

    // MARK: Expiry

    @Test func unstartedItemExpires() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b", expireAfter: 5))
        _ = scheduler.add(item("c", at: 1, expireAfter: 0.5), now: 1)
        #expect(scheduler.nextDeadline == 1.5)
        #expect(describe(scheduler.advance(now: 1.5)) == ["finish c: expired (not started within 0.5s)"])
        #expect(scheduler.nextDeadline == 5)
        #expect(scheduler.advance(now: 4.9).isEmpty)
        #expect(describe(scheduler.advance(now: 5)) == ["finish b: expired (not started within 5s)"])
        #expect(scheduler.nextDeadline == nil)
        #expect(scheduler.endPlaying(now: 6) == ["finish a: played"])
    }

    @Test func startedItemNeverExpires() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", expireAfter: 1))
        #expect(scheduler.nextDeadline == nil)
        #expect(scheduler.advance(now: 10).isEmpty)
        _ = scheduler.add(item("b", .high, at: 10), now: 10)
        _ = scheduler.endPlaying(.stopped, heard: 10, now: 10)
        #expect(scheduler.advance(now: 100).isEmpty)
        #expect(scheduler.endPlaying(now: 100) == ["finish b: played", "play a from 10"])
    }

    @Test func scheduledItemExpiresCountingFromEligibility() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("hold"))
        _ = scheduler.add(item("s", eligibleAt: 10, expireAfter: 5))
        #expect(scheduler.nextDeadline == 10)
        #expect(scheduler.advance(now: 10).isEmpty)
        #expect(scheduler.ready.map(\.id) == ["s"])
        #expect(scheduler.nextDeadline == 15)
        #expect(scheduler.advance(now: 14.9).isEmpty)
        #expect(describe(scheduler.advance(now: 15)) == ["finish s: expired (not started within 5s)"])
    }

    @Test func pausedQueueStillExpires() {
        var scheduler = Scheduler()
        _ = scheduler.pause(now: 0)
        _ = scheduler.add(item("a", expireAfter: 2))
        #expect(describe(scheduler.resume(now: 3)) == ["finish a: expired (not started within 2s)"])
    }

    // MARK: Scheduled

    @Test func scheduledItemIsHeldThenPlays() {
        var scheduler = Scheduler()
        #expect(scheduler.add(item("s", eligibleAt: 10)) == ["persist s"])
        #expect(scheduler.scheduled.map(\.id) == ["s"])
        #expect(scheduler.ready.isEmpty)
        #expect(scheduler.count == 1)
        #expect(scheduler.nextDeadline == 10)
        #expect(scheduler.advance(now: 9.99).isEmpty)
        #expect(describe(scheduler.advance(now: 10)) == ["play s"])
        #expect(scheduler.scheduled.isEmpty)
        #expect(scheduler.nextDeadline == nil)
    }

    @Test func scheduledItemsAreListedByEligibility() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("s1", eligibleAt: 30))
        _ = scheduler.add(item("s2", .low, eligibleAt: 20))
        _ = scheduler.add(item("s3", .high, eligibleAt: 25))
        #expect(scheduler.scheduled.map(\.id) == ["s2", "s3", "s1"])
        #expect(scheduler.nextDeadline == 20)
    }

    @Test func scheduledItemPreemptsWhenItBecomesEligible() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        #expect(scheduler.add(item("h", .high, eligibleAt: 10)) == ["persist h"])
        #expect(describe(scheduler.advance(now: 10)) == ["stop a: preempted by h"])
    }

    @Test func pastEligibilityIsReadyAtOnce() {
        var scheduler = Scheduler()
        #expect(scheduler.add(item("s", at: 10, eligibleAt: 5), now: 10) == ["persist s", "play s"])
        #expect(scheduler.add(item("t", at: 10, eligibleAt: 10), now: 10) == ["persist t"])
        #expect(scheduler.ready.map(\.id) == ["t"])
    }

    // MARK: Controls

    @Test func pauseHoldsTheQueueAndResumeGoesOn() {
        var scheduler = Scheduler()
        #expect(scheduler.pause(now: 0).isEmpty)
        #expect(scheduler.isPaused)
        #expect(scheduler.add(item("a")) == ["persist a"])
        #expect(describe(scheduler.resume(now: 1)) == ["play a"])
        #expect(describe(scheduler.pause(now: 2)) == ["stop a: paused"])
        #expect(scheduler.pause(now: 2).isEmpty)
        #expect(
            scheduler.endPlaying(.stopped, heard: 300, total: 1000, now: 2) == ["interrupted a: paused", "persist a"])
        #expect(scheduler.playing == nil)
        #expect(scheduler.add(item("b", .high), now: 3) == ["persist b"])
        #expect(describe(scheduler.resume(now: 4)) == ["play b"])
        #expect(scheduler.endPlaying(now: 5) == ["finish b: played", "play a from 300"])
    }

    @Test func pauseNeverDropsEvenPastTheDropFraction() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", onInterrupt: .drop))
        _ = scheduler.pause(now: 1)
        #expect(scheduler.endPlaying(.stopped, heard: 900, total: 1000) == ["interrupted a: paused", "persist a"])
        #expect(describe(scheduler.resume(now: 2)) == ["play a from 900"])
    }

    @Test func pauseDuringAPreemptionKeepsThePreemption() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", .low, onInterrupt: .drop))
        _ = scheduler.add(item("h", .high))
        #expect(scheduler.pause(now: 1).isEmpty)
        #expect(scheduler.endPlaying(.stopped, heard: 10) == ["finish a: dropped (preempted by h)"])
        #expect(describe(scheduler.resume(now: 2)) == ["play h"])
    }

    @Test func skipEndsThePlayingItemAndTheNextPlays() {
        var scheduler = Scheduler()
        #expect(scheduler.skip(now: 0).isEmpty)
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b"))
        #expect(describe(scheduler.skip(now: 1)) == ["stop a: skipped"])
        #expect(scheduler.skip(now: 1).isEmpty)
        #expect(scheduler.endPlaying(.stopped, heard: 10, now: 2) == ["finish a: cancelled (skipped)", "play b"])
    }

    @Test func clearCancelsWaitingItemsAndThePlayingOneGoesOn() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b", .low, expireAfter: 5))
        _ = scheduler.add(item("c", .high, interrupts: false))
        _ = scheduler.add(item("s", eligibleAt: 10))
        #expect(
            describe(scheduler.clear(now: 1))
                == ["finish c: cancelled (cleared)", "finish b: cancelled (cleared)", "finish s: cancelled (cleared)"])
        #expect(scheduler.playing?.id == "a")
        #expect(!scheduler.isStopping)
        #expect(scheduler.count == 1)
        #expect(scheduler.nextDeadline == nil)
        #expect(scheduler.advance(now: 20).isEmpty)
        #expect(scheduler.endPlaying(now: 20) == ["finish a: played"])
    }

    @Test func stopClearsAndStopsThePlayingItem() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b"))
        _ = scheduler.add(item("s", eligibleAt: 10))
        #expect(
            describe(scheduler.stop(now: 1))
                == ["finish b: cancelled (cleared)", "finish s: cancelled (cleared)", "stop a: stopped"])
        #expect(scheduler.stop(now: 1).isEmpty)
        #expect(scheduler.endPlaying(.stopped, heard: 10, now: 2) == ["finish a: cancelled (stopped)"])
        #expect(scheduler.count == 0)
        #expect(scheduler.stop(now: 3).isEmpty)
    }

    @Test func cancelByIDReportsUnknownOnes() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b"))
        _ = scheduler.add(item("c"))
        let (effects, unknown) = scheduler.cancel(ids: ["c", "zz", "a", "c"], now: 1)
        #expect(describe(effects) == ["finish c: cancelled (cancelled)", "stop a: cancelled"])
        #expect(unknown == ["zz", "c"])
        // The playing item is not final until its playback ends.
        let again = scheduler.cancel(ids: ["a"], now: 1)
        #expect(again.effects.isEmpty)
        #expect(again.unknown.isEmpty)
        #expect(scheduler.endPlaying(.stopped, heard: 10, now: 2) == ["finish a: cancelled (cancelled)", "play b"])
        #expect(scheduler.cancel(ids: ["a"], now: 3).unknown == ["a"])
    }

    @Test func cancelByTag() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", tag: "t"))
        _ = scheduler.add(item("b", tag: "t"))
        _ = scheduler.add(item("c", tag: "u"))
        _ = scheduler.add(item("s", tag: "t", eligibleAt: 10))
        #expect(
            describe(scheduler.cancel(tag: "t", now: 1))
                == ["finish b: cancelled (cancelled)", "finish s: cancelled (cancelled)", "stop a: cancelled"])
        #expect(scheduler.cancel(tag: "nothing", now: 1).isEmpty)
        #expect(scheduler.endPlaying(.stopped, heard: 10, now: 2) == ["finish a: cancelled (cancelled)", "play c"])
    }

    @Test func cancellingThePreemptedItemMakesItFinal() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", .low))
        _ = scheduler.add(item("h", .high))
        let (effects, unknown) = scheduler.cancel(ids: ["a"], now: 1)
        #expect(effects.isEmpty)
        #expect(unknown.isEmpty)
        #expect(scheduler.endPlaying(.stopped, heard: 10) == ["finish a: cancelled (cancelled)", "play h"])
        #expect(scheduler.count == 1)
    }

    @Test func theFirstFinalStopReasonWins() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a", tag: "t"))
        #expect(describe(scheduler.skip(now: 0)) == ["stop a: skipped"])
        #expect(scheduler.cancel(ids: ["a"], now: 0).effects.isEmpty)
        #expect(scheduler.add(item("b", tag: "t"), replace: true) == ["persist b"])
        #expect(describe(scheduler.stop(now: 0)) == ["finish b: cancelled (cleared)"])
        #expect(scheduler.endPlaying(.stopped) == ["finish a: cancelled (skipped)"])
    }

    @Test func endOfPlayIsReportedAsItHappened() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b"))
        _ = scheduler.add(item("c"))
        #expect(scheduler.playbackEnded(id: "b", heardFrames: 1, totalFrames: nil, end: .finished, now: 0).isEmpty)
        _ = scheduler.skip(now: 0)
        // It reached its end before the stop took effect.
        #expect(scheduler.endPlaying(.finished) == ["finish a: played", "play b"])
        #expect(
            scheduler.endPlaying(.failed(code: 66, message: "cannot open /sounds/b.wav"))
                == ["finish b: failed 66 (cannot open /sounds/b.wav)", "play c"])
        #expect(scheduler.endPlaying(.stopped, heard: 40) == ["interrupted c: paused", "persist c", "play c from 40"])
        _ = scheduler.endPlaying()
        #expect(scheduler.playbackEnded(id: "c", heardFrames: 1, totalFrames: nil, end: .finished, now: 0).isEmpty)
    }

    // MARK: Quiet mode

    @Test func silencedPlayEndsOnceAndTheNextItemPlays() {
        var scheduler = Scheduler()
        _ = scheduler.pause(now: 0)
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b"))
        _ = scheduler.add(item("c", .low))
        #expect(describe(scheduler.resume(now: 1)) == ["play a"])
        // The daemon declines each play it is offered while quiet mode is on.
        #expect(
            scheduler.endPlaying(.silenced(reason: "quiet mode"), now: 1)
                == ["finish a: silenced (quiet mode)", "play b"])
        #expect(
            scheduler.endPlaying(.silenced(reason: "quiet mode"), now: 1)
                == ["finish b: silenced (quiet mode)", "play c"])
        // A late second report for a silenced item changes nothing.
        #expect(
            scheduler.playbackEnded(
                id: "a", heardFrames: 0, totalFrames: nil,
                end: .silenced(reason: "quiet mode"), now: 1
            ).isEmpty)
        #expect(scheduler.playing?.id == "c")
        #expect(scheduler.endPlaying(now: 2) == ["finish c: played"])
        #expect(scheduler.count == 0 && scheduler.playing == nil)
    }

    @Test func anInterruptedItemThatResumesInQuietModeEndsSilenced() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        #expect(scheduler.add(item("h", .high)) == ["persist h", "stop a: preempted by h"])
        #expect(
            scheduler.endPlaying(.stopped, heard: 40, total: 1000)
                == ["interrupted a: preempted by h", "persist a", "play h"])
        #expect(scheduler.endPlaying() == ["finish h: played", "play a from 40"])
        // Quiet mode came on meanwhile: the resumption is declined, and that is its one outcome.
        #expect(scheduler.endPlaying(.silenced(reason: "quiet mode")) == ["finish a: silenced (quiet mode)"])
        #expect(scheduler.count == 0)
        #expect(Outcome(.silenced, reason: "quiet mode").exitCode == 75)
    }

    // MARK: Restore

    @Test func restoresShuffledItemsInOrder() {
        func restored(
            _ id: ItemID, _ priority: Priority, sequence: UInt64, eligibleAt: Double? = nil,
            heard: Int64 = 0
        ) -> QueueItem {
            var restoredItem = item(id, priority, eligibleAt: eligibleAt)
            restoredItem.sequence = sequence
            if heard > 0 {
                restoredItem.started = true
                restoredItem.interrupted = true
                restoredItem.heardFrames = heard
                restoredItem.totalFrames = 1000
            }
            return restoredItem
        }
        let items = [
            restored("r1", .normal, sequence: 3),
            restored("r2", .high, sequence: 5),
            restored("r3", .normal, sequence: 7, heard: 400),
            restored("r4", .low, sequence: 2),
            restored("r5", .normal, sequence: 4, eligibleAt: 100),
            restored("r6", .normal, sequence: 9, eligibleAt: 10)
        ]
        var generator = SplitMix64(state: 42)
        var scheduler = Scheduler(restoring: items.shuffled(using: &generator))
        #expect(scheduler.nextSequence == 10)
        #expect(scheduler.count == 6)
        #expect(scheduler.playing == nil)
        #expect(scheduler.ready.map(\.id) == ["r2", "r3", "r1", "r4"])
        #expect(scheduler.scheduled.map(\.id) == ["r6", "r5"])
        #expect(scheduler.nextDeadline == 10)

        var r2Playing = items[1]
        r2Playing.started = true
        #expect(scheduler.advance(now: 50) == [.play(r2Playing)])
        #expect(scheduler.ready.map(\.id) == ["r3", "r1", "r6", "r4"])
        #expect(scheduler.add(item("new"), now: 50) == ["persist new"])
        #expect(scheduler.ready.last(where: { $0.priority == .normal })?.sequence == 10)
        #expect(scheduler.endPlaying(now: 51) == ["finish r2: played", "play r3 from 400"])
        #expect(scheduler.playAll(now: 52) == ["r3", "r1", "r6", "new", "r4"])
        #expect(describe(scheduler.advance(now: 100)) == ["play r5"])
    }

    @Test func restoresAManyItemShuffleInPlayOrder() {
        var generator = SplitMix64(state: 7)
        var original = Scheduler()
        _ = original.pause(now: 0)
        for index in 0..<300 {
            let priority = Priority.allCases.randomElement(using: &generator) ?? .normal
            _ = original.enqueue(item("i\(index)", priority), now: 0)
        }
        let restored = Scheduler(restoring: original.ready.shuffled(using: &generator))
        #expect(restored.ready == original.ready)
        #expect(restored.nextSequence == original.nextSequence)
        #expect(Scheduler().nextSequence == 1)
    }

    // MARK: Property

    /// What the daemon sees: a spool, the playing item, and every outcome.
    private struct FakeDaemon {
        var spool: [ItemID: QueueItem] = [:]
        var finishes: [ItemID: Int] = [:]
        var accepted: Set<ItemID> = []
        var playing: ItemID?
        var stopRequested = false
        var problems: [String] = []

        mutating func apply(_ effects: [SchedulerEffect]) {
            for effect in effects {
                switch effect {
                case .persist(let item):
                    if finishes[item.id] != nil { problems.append("persist after finish: \(item.id)") }
                    accepted.insert(item.id)
                    spool[item.id] = item
                case .play(let item):
                    if playing != nil {
                        problems.append("play \(item.id) while \(playing.map(\.rawValue) ?? "") plays")
                    }
                    if spool[item.id] == nil { problems.append("play of unspooled \(item.id)") }
                    playing = item.id
                    stopRequested = false
                case .stopPlayback(let id, _):
                    if id != playing { problems.append("stop of \(id), not playing") }
                    if stopRequested { problems.append("second stop for \(id)") }
                    stopRequested = true
                case .interrupted(let item, _):
                    if spool[item.id] == nil { problems.append("interrupted unspooled \(item.id)") }
                case .finish(let item, _):
                    finishes[item.id, default: 0] += 1
                    if finishes[item.id, default: 0] > 1 { problems.append("second finish for \(item.id)") }
                    if item.id == playing { problems.append("finish of \(item.id) while it plays") }
                    if spool.removeValue(forKey: item.id) == nil { problems.append("finish of unspooled \(item.id)") }
                }
            }
        }

        /// The daemon reports the end of the play it started.
        mutating func endPlay(_ scheduler: inout Scheduler, generator: inout SplitMix64, now: Double) {
            guard let id = playing else { return }
            let end: PlaybackEnd =
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: .failed(code: 65, message: "corrupt")
                case 1...3: .finished
                default: stopRequested ? .stopped : .finished
                }
            let total: Int64? = Bool.random(using: &generator) ? 1000 : nil
            playing = nil
            stopRequested = false
            apply(
                scheduler.playbackEnded(
                    id: id, heardFrames: Int64.random(in: 0...600, using: &generator),
                    totalFrames: total, end: end, now: now))
        }
    }

    /// The deadline the scheduler should report, worked out from its listings rather than its heaps.
    private func expectedDeadline(_ scheduler: Scheduler) -> Double? {
        let waiting = scheduler.ready + scheduler.scheduled
        let eligibilities = scheduler.scheduled.compactMap(\.eligibleAt)
        let expiries = waiting.filter { !$0.started }.compactMap(\.expiresAt)
        return (eligibilities + expiries).min()
    }

    @Test func everyItemGetsExactlyOneOutcome() {
        var generator = SplitMix64(state: 0x5EED)
        var scheduler = Scheduler()
        var daemon = FakeDaemon()
        var now = 1_000.0
        var issued: [ItemID] = []
        let tags: [String?] = [nil, "t0", "t1", "t2"]

        for step in 0..<4000 {
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<30:
                let id: ItemID = "i\(issued.count)"
                issued.append(id)
                let newItem = item(
                    id, Priority.allCases.randomElement(using: &generator) ?? .normal, at: now,
                    interrupts: Int.random(in: 0..<5, using: &generator) > 0,
                    onInterrupt: InterruptAction.allCases.randomElement(using: &generator) ?? .resume,
                    dropAfter: [0.5, 0.8, 1.0].randomElement(using: &generator) ?? 0.8,
                    tag: tags.randomElement(using: &generator) ?? nil,
                    eligibleAt: Int.random(in: 0..<5, using: &generator) == 0
                        ? now + Double.random(in: -5...20, using: &generator) : nil,
                    expireAfter: Int.random(in: 0..<5, using: &generator) == 0
                        ? Double.random(in: 0...30, using: &generator) : nil)
                daemon.apply(
                    scheduler.enqueue(newItem, replace: Int.random(in: 0..<3, using: &generator) == 0, now: now))
            case 30..<45:
                now += Double.random(in: 0...5, using: &generator)
                daemon.apply(scheduler.advance(now: now))
            case 45..<62:
                daemon.endPlay(&scheduler, generator: &generator, now: now)
            case 62..<67:
                var ids = (0..<Int.random(in: 1...3, using: &generator)).compactMap { _ in
                    issued.randomElement(using: &generator)
                }
                ids.append("nope")
                let live = Set(daemon.spool.keys)
                let (effects, unknown) = scheduler.cancel(ids: ids, now: now)
                // An id is unknown when it is not live at that point of the list (a repeat counts as final).
                var seen: Set<ItemID> = []
                let expectedUnknown = ids.filter { id in
                    defer { seen.insert(id) }
                    return !live.contains(id) || (seen.contains(id) && id != daemon.playing)
                }
                #expect(unknown == expectedUnknown, "step \(step)")
                daemon.apply(effects)
            case 67..<70:
                daemon.apply(
                    scheduler.cancel(tag: tags.compactMap { $0 }.randomElement(using: &generator) ?? "t0", now: now))
            case 70..<74:
                daemon.apply(scheduler.skip(now: now))
            case 74..<78:
                daemon.apply(scheduler.pause(now: now))
            case 78..<85:
                daemon.apply(scheduler.resume(now: now))
            case 85..<87:
                daemon.apply(scheduler.clear(now: now))
            case 87:
                daemon.apply(scheduler.stop(now: now))
            case 88..<98:
                if let deadline = scheduler.nextDeadline {
                    now = max(now, deadline)
                    daemon.apply(scheduler.advance(now: now))
                }
            default:
                // The daemon is killed and restarts from its spool.
                var restarted = Scheduler(restoring: daemon.spool.values.shuffled(using: &generator))
                daemon.playing = nil
                daemon.stopRequested = false
                daemon.apply(restarted.advance(now: now))
                scheduler = restarted
            }

            #expect(daemon.problems.isEmpty, "step \(step): \(daemon.problems)")
            #expect(scheduler.count == daemon.spool.count, "step \(step)")
            #expect(scheduler.playing?.id == daemon.playing, "step \(step)")
            #expect(scheduler.isStopping == daemon.stopRequested, "step \(step)")
            #expect(scheduler.nextDeadline == expectedDeadline(scheduler), "step \(step)")
            // Nothing waits while the lane is free and the queue runs.
            #expect(scheduler.playing != nil || scheduler.isPaused || scheduler.ready.isEmpty, "step \(step)")
            if !daemon.problems.isEmpty { return }
        }

        daemon.apply(scheduler.stop(now: now))
        daemon.endPlay(&scheduler, generator: &generator, now: now)
        #expect(daemon.problems.isEmpty)
        #expect(scheduler.count == 0)
        #expect(daemon.spool.isEmpty)
        #expect(issued.count == 1_217, "the seeded walk enqueues the same items every run")
        #expect(daemon.accepted == Set(issued))
        #expect(daemon.finishes.count == issued.count)
        #expect(daemon.finishes.values.allSatisfy { $0 == 1 })
    }

    // MARK: holds (device busy or lost, session interruptions of the main lane)

    @Test func aHoldStopsThePlayingItemWhichResumesWhenReleased() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b", at: 1))
        #expect(describe(scheduler.hold(.deviceLost, now: 1)) == ["stop a: held: device-lost"])
        #expect(scheduler.endPlaying(.stopped, heard: 480, now: 1) == ["interrupted a: held: device-lost", "persist a"])
        #expect(scheduler.playing == nil, "nothing starts while held")
        #expect(describe(scheduler.advance(now: 5)) == [])
        #expect(describe(scheduler.resume(now: 5)) == [], "a user's resume does not lift a hold")
        #expect(describe(scheduler.release(.deviceLost, now: 6)) == ["play a from 480"])
    }

    @Test func aPlayThatEndsHeldGoesBackAndHoldsTheQueue() {
        var scheduler = Scheduler()
        _ = scheduler.add(item("a"))
        _ = scheduler.add(item("b", .high, at: 1, expireAfter: 3))
        // b preempted a, then found the device busy.
        _ = scheduler.endPlaying(.stopped, heard: 100, now: 1)
        #expect(scheduler.playing?.id == "b")
        #expect(scheduler.endPlaying(.held(.deviceBusy), now: 2) == ["interrupted b: held: device-busy", "persist b"])
        #expect(scheduler.holds == [.deviceBusy])
        #expect(describe(scheduler.advance(now: 3)) == [])
        // b never started, so its --expire still runs while the queue waits for the device.
        #expect(describe(scheduler.advance(now: 4.5)) == ["finish b: expired (not started within 3s)"])
        #expect(describe(scheduler.release(.deviceBusy, now: 5)) == ["play a from 100"])
    }

    @Test func twoHoldsMustBothBeReleased() {
        var scheduler = Scheduler()
        _ = scheduler.hold(.interruptedBy("x"), now: 0)
        _ = scheduler.hold(.interruptedBy("y"), now: 0)
        _ = scheduler.add(item("a"))
        #expect(describe(scheduler.release(.interruptedBy("x"), now: 1)) == [])
        #expect(describe(scheduler.release(.interruptedBy("y"), now: 1)) == ["play a"])
    }
}

/// The daemon carries out a preempting item's play before the preempted item's spool write.
@Suite struct PlaysFirstTests {
    @Test func aPreemptingPlayComesBeforeThePreemptedItemsWrite() {
        var scheduler = Scheduler()
        _ = scheduler.enqueue(item("a"), now: 0)
        _ = scheduler.enqueue(item("b", .high), now: 1)
        let ended = scheduler.playbackEnded(id: "a", heardFrames: 10, totalFrames: nil, end: .stopped, now: 2)
        #expect(describe(ended) == ["interrupted a: preempted by b", "persist a", "play b"])
        #expect(describe(SchedulerEffect.playsFirst(ended)) == ["interrupted a: preempted by b", "play b", "persist a"])
    }

    @Test func nothingElseMoves() {
        let (a, b, c) = (item("a"), item("b"), item("c"))
        let cases: [([SchedulerEffect], [String])] = [
            // A write of the played item itself stays before its play.
            ([.persist(b), .play(b)], ["persist b", "play b"]),
            // A write never passes what could end its item.
            ([.persist(a), .finish(a, .played), .play(b)], ["persist a", "finish a: played", "play b"]),
            (
                [.persist(a), .stopPlayback(id: "a", reason: .paused), .play(b)],
                ["persist a", "stop a: paused", "play b"]
            ),
            // Without a play, the order is the scheduler's.
            (
                [.persist(a), .interrupted(a, reason: .paused), .persist(c)],
                ["persist a", "interrupted a: paused", "persist c"]
            ),
            // Each play takes only the writes just before it.
            ([.persist(a), .play(b), .persist(c), .play(a)], ["play b", "persist a", "play a", "persist c"])
        ]
        for (effects, expected) in cases { #expect(describe(SchedulerEffect.playsFirst(effects)) == expected) }
    }
}
