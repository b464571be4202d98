import Testing

@testable import AnnounceModel

/// Each interruption is announced once, whoever reports it, a play's start once, and an item ends once.
@Suite struct ItemLifecycleTests {
    @Test func anInterruptionBeginsOnceAndEndsWhenFramesAreHeardAgain() {
        var life = ItemLifecycle()
        life.start()
        #expect(life.state == .starting)
        #expect(
            life.heard(stillInterrupted: false) == ItemLifecycle.Heard(endsInterruption: false),
            "a first start ends no interruption")
        #expect(life.state == .playing)
        #expect(
            life.heard(stillInterrupted: false) == nil,
            "a multi-route play's second device: its start is announced once")
        // The device reports it busy, then the scheduler's effect says the same: announced once.
        let first = life.interrupt()
        let second = life.interrupt()
        #expect(first && !second)
        life.start()
        #expect(life.state == .starting)
        #expect(life.heard(stillInterrupted: false) == ItemLifecycle.Heard(endsInterruption: true))
        #expect(life.state == .resumed)
        #expect(life.heard(stillInterrupted: false) == nil)
        life.playEnded()
        #expect(life.state == .queued)
    }

    @Test func aSessionThatStillInterruptsKeepsTheInterruption() {
        var life = ItemLifecycle(interrupted: true)
        life.start()
        #expect(life.heard(stillInterrupted: true) == ItemLifecycle.Heard(endsInterruption: false))
        #expect(life.isInterrupted)
        let ended = life.endInterruption()
        let twice = life.endInterruption()
        #expect(ended && !twice)
        #expect(life.isInterrupted, "it still waits to be heard again; `status` says interrupted")
        life.start()
        #expect(
            life.heard(stillInterrupted: false) == ItemLifecycle.Heard(endsInterruption: false),
            "already announced as ended")
        #expect(life.state == .resumed)
    }

    @Test func anItemEndsOnceAndThenNothingChangesIt() {
        var life = ItemLifecycle()
        let first = life.finish(Outcome(.played))
        let second = life.finish(Outcome(.cancelled))
        #expect(first && !second)
        #expect(life.state == .final(Outcome(.played)))
        life.start()
        let interrupted = life.interrupt()
        let heard = life.heard(stillInterrupted: false)
        #expect(!interrupted && heard == nil && life.isFinal)
    }

    /// A seeded random walk over every call, in any order, as the daemon's several reporters
    /// (scheduler, sessions, device, engines) make them: what is announced makes sense in
    /// order: interruption-began and -ended alternate, a play's start is announced at most
    /// once, there is exactly one outcome, and nothing at all after it.
    @Test(arguments: 0..<50 as Range<UInt64>) func randomWalkAnnouncesOneOutcomeAndNothingAfter(seed: UInt64) {
        var generator = SplitMix64(state: seed)
        let restoredInterrupted = Bool.random(using: &generator)
        var life = ItemLifecycle(interrupted: restoredInterrupted)
        // What a client has heard: an interruption open (began without ended), outcomes, announcements after one.
        var open = restoredInterrupted
        var outcomes: [Outcome] = []
        var afterFinal = 0
        var startsInPlay = 0
        var interruptedSinceHeard = restoredInterrupted
        let kinds = OutcomeKind.allCases
        for _ in 0..<200 {
            let final = life.isFinal
            switch Int.random(in: 0..<8, using: &generator) {
            case 0, 1:
                life.start()
                startsInPlay = 0
                if !final { #expect(life.state == .starting) }
            case 2, 3:
                let still = Int.random(in: 0..<4, using: &generator) == 0
                guard let heard = life.heard(stillInterrupted: still) else { continue }
                if final { afterFinal += 1 }
                startsInPlay += 1
                #expect(startsInPlay == 1, "a play's start is announced once")
                if heard.endsInterruption {
                    #expect(open, "an interruption ends only once it began")
                    open = false
                }
                if life.state == .resumed || life.state == .playing {
                    #expect((life.state == .resumed) == interruptedSinceHeard, "resumed: heard after an interruption")
                    interruptedSinceHeard = false
                }
            case 4:
                life.playEnded()
                #expect(!life.isPlaying)
            case 5:
                let began = life.interrupt()
                if !final { interruptedSinceHeard = true }
                if began {
                    if final { afterFinal += 1 }
                    #expect(!open, "an interruption begins once")
                    open = true
                }
                if !final { #expect(life.isInterrupted) }
            case 6:
                if life.endInterruption() {
                    if final { afterFinal += 1 }
                    #expect(open, "an interruption ends only once it began")
                    open = false
                }
            default:
                let outcome = Outcome(kinds[Int.random(in: 0..<kinds.count, using: &generator)])
                if life.finish(outcome) { outcomes.append(outcome) }
            }
            if let first = outcomes.first { #expect(life.state == .final(first), "the first outcome stays") }
        }
        if outcomes.isEmpty, life.finish(Outcome(.cancelled)) { outcomes.append(Outcome(.cancelled)) }
        #expect(outcomes.count == 1, "exactly one outcome")
        #expect(afterFinal == 0, "nothing is announced after the outcome")
    }
}
