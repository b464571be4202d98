import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

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

    /// By the source's kind: a file at the frame heard, speech at the start of the sentence
    /// heard (the frames between are played again), a live stream at what it gives now.
    @Test func eachKindOfSourceGoesOnWhereItSays() throws {
        let file = MemorySource(samples: ramp(frames: 1000, channels: 1), channels: 1)
        #expect(try #require(EngineDriver.resumePoint(of: file, heard: 400, startFrame: 250, loops: 0)) == (650, 0, 0))
        let speech = MemorySource(samples: ramp(frames: 1000, channels: 1), channels: 1, resumption: .sentenceStart)
        speech.sentenceStarts = [300, 600, 900]
        #expect(
            try #require(EngineDriver.resumePoint(of: speech, heard: 400, startFrame: 250, loops: 0)) == (600, 0, 50))
        #expect(
            try #require(EngineDriver.resumePoint(of: speech, heard: 0, startFrame: 250, loops: 0)) == (250, 0, 0),
            "a first play starts at --start")
        let live = MemorySource(
            samples: ramp(frames: 1000, channels: 1), channels: 1, lengthKnown: false, canSeek: false,
            resumption: .liveRejoin)
        #expect(try #require(EngineDriver.resumePoint(of: live, heard: 48_000, startFrame: 0, loops: 0)) == (0, 0, 0))
    }

    @Test func loopingForeverKeepsLooping() {
        #expect(EngineDriver.resumePoint(heard: 123_456, startFrame: 0, fileFrames: 1000, loops: -1)! == (456, -1))
    }
}
