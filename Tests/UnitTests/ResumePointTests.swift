@testable import AnnounceModel
@testable import AnnounceSystem
@testable import AnnounceSources
@testable import AnnounceOutput
@testable import AnnounceEngine
@testable import AnnounceDaemon
@testable import AnnounceClient
import Testing

/// Where a preempted item goes on: heard frames counted over the whole program
/// (every pass, the first from --start) mapped back to a file offset and passes left.
@Suite struct ResumePointTests {
    @Test func programLengthCountsEveryPassFromTheStart() {
        #expect(PlaybackOptions.programFrames(fileFrames: 1000, startFrame: 0, loops: 0) == 1000)
        #expect(PlaybackOptions.programFrames(fileFrames: 1000, startFrame: 250, loops: 2) == 2750)
        #expect(PlaybackOptions.programFrames(fileFrames: 1000, startFrame: 0, loops: -1) == nil)
        #expect(PlaybackOptions.programFrames(fileFrames: nil, startFrame: 0, loops: 0) == nil)
    }

    @Test func resumesInTheFirstPass() {
        #expect(EngineDriver.resumePoint(heard: 0, startFrame: 0, fileFrames: 1000, loops: 0)! == (0, 0))
        #expect(EngineDriver.resumePoint(heard: 400, startFrame: 250, fileFrames: 1000, loops: 0)! == (650, 0))
    }

    @Test func resumesInALaterPassWithFewerLoopsLeft() {
        #expect(EngineDriver.resumePoint(heard: 1000, startFrame: 250, fileFrames: 1000, loops: 2)! == (250, 1))
        #expect(EngineDriver.resumePoint(heard: 2749, startFrame: 250, fileFrames: 1000, loops: 2)! == (999, 0))
    }

    @Test func nothingLeftOnceTheWholeProgramWasHeard() {
        #expect(EngineDriver.resumePoint(heard: 2750, startFrame: 250, fileFrames: 1000, loops: 2) == nil)
        #expect(EngineDriver.resumePoint(heard: 1000, startFrame: 0, fileFrames: 1000, loops: 0) == nil)
    }

    @Test func loopingForeverKeepsLooping() {
        #expect(EngineDriver.resumePoint(heard: 123_456, startFrame: 0, fileFrames: 1000, loops: -1)! == (456, -1))
    }
}
