import Testing
@testable import AnnounceModel

/// Each interruption is announced once, whoever reports it, and an item ends once.
@Suite struct ItemLifecycleTests {
    @Test func anInterruptionBeginsOnceAndEndsWhenFramesAreHeardAgain() {
        var life = ItemLifecycle()
        life.start()
        #expect(life.state == .starting)
        let endedNothing = life.heard(stillInterrupted: false)
        #expect(!endedNothing, "a first start ends no interruption")
        #expect(life.state == .playing)
        // The device reports it busy, then the scheduler's effect says the same: announced once.
        let first = life.interrupt(), second = life.interrupt()
        #expect(first && !second)
        life.start()
        #expect(life.isInterrupted, "handed to the engines is not heard yet")
        let ended = life.heard(stillInterrupted: false), again = life.heard(stillInterrupted: false)
        #expect(ended && !again)
    }

    @Test func aSessionThatStillInterruptsKeepsTheInterruption() {
        var life = ItemLifecycle(interrupted: true)
        let heardWhileHeld = life.heard(stillInterrupted: true)
        #expect(!heardWhileHeld && life.isInterrupted)
        let ended = life.endInterruption(), twice = life.endInterruption()
        #expect(ended && !twice)
        #expect(life.state == .queued)
        let heard = life.heard(stillInterrupted: false)
        #expect(!heard, "already announced as ended")
    }

    @Test func anItemEndsOnceAndThenNothingChangesIt() {
        var life = ItemLifecycle()
        let first = life.finish(Outcome(.played)), second = life.finish(Outcome(.cancelled))
        #expect(first && !second)
        #expect(life.state == .final(Outcome(.played)))
        let interrupted = life.interrupt(), heard = life.heard(stillInterrupted: false)
        #expect(!interrupted && !heard && life.isFinal)
    }
}
