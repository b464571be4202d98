import Testing

@testable import AnnounceModel

/// Frames a reshaping source gave out, mapped back to source frames: steady at the tempo,
/// jumping over cut silence, exact where a pass ended.
@Suite struct ReshapedTimelineTests {
    @Test func withoutCutsTheSourceMovesAtTheTempo() {
        var timeline = ReshapedTimeline(tempo: 2, memory: 1 << 30)
        timeline.keep(96_000)
        #expect(timeline.sourceFrames(forOutput: 0) == 0)
        #expect(timeline.sourceFrames(forOutput: 12_345) == 24_690)
        #expect(timeline.sourceFrames(forOutput: 48_000) == 96_000)
        // Never past what was read: libsonic may give its flushed tail a frame or two long.
        #expect(timeline.sourceFrames(forOutput: 48_003) == 96_000)
    }

    @Test func aCutIsAJumpWhereTheKeptFramesReachTheOutput() {
        var timeline = ReshapedTimeline(tempo: 1, memory: 1 << 30)
        timeline.keep(100)
        timeline.cut(50)
        timeline.keep(100)
        #expect(timeline.sourceFrames(forOutput: 99) == 99)
        #expect(timeline.sourceFrames(forOutput: 100) == 150, "the first frame after the cut")
        #expect(timeline.sourceFrames(forOutput: 200) == 250)
    }

    @Test func aCutAtTempoTwoFallsAtHalfTheKeptFrames() {
        var timeline = ReshapedTimeline(tempo: 2, memory: 1 << 30)
        timeline.keep(200)
        timeline.cut(1_000)
        timeline.keep(200)
        #expect(timeline.sourceFrames(forOutput: 99) == 198)
        #expect(timeline.sourceFrames(forOutput: 100) == 1_200)
        #expect(timeline.sourceFrames(forOutput: 150) == 1_300)
    }

    @Test func leadingSilenceMapsTheFirstFrameOut() {
        var timeline = ReshapedTimeline(tempo: 1, memory: 1 << 30)
        timeline.cut(480)
        timeline.keep(1_000)
        #expect(timeline.sourceFrames(forOutput: 0) == 480)
        #expect(timeline.sourceFrames(forOutput: 10) == 490)
    }

    /// libsonic's flushed pass is a few frames off the tempo: the next pass starts exact, and
    /// the source never runs backwards across the seam.
    @Test func aPassEndAlignsTheCountsAndTheMapStaysMonotonic() {
        var timeline = ReshapedTimeline(tempo: 2, memory: 1 << 30)
        timeline.keep(1_000)
        timeline.observe(output: 503)
        timeline.keep(1_000)
        #expect(timeline.sourceFrames(forOutput: 502) == 1_000, "held at the pass's end, not 1 004")
        #expect(timeline.sourceFrames(forOutput: 503) == 1_000)
        #expect(timeline.sourceFrames(forOutput: 1_003) == 2_000)
        var previous: Int64 = 0
        for output in stride(from: Int64(0), through: 1_010, by: 1) {
            let source = timeline.sourceFrames(forOutput: output)
            #expect(source >= previous, "at \(output)")
            previous = source
        }
    }

    /// libsonic runs a little fast or slow: each observation of its counts puts the map back on
    /// them, so the error never grows with the length.
    @Test func anObservationCorrectsTheTempoStagesDrift() {
        var timeline = ReshapedTimeline(tempo: 2, memory: 1 << 30)
        timeline.keep(10_000)
        timeline.observe(output: 4_900, kept: 9_000)  // 1 000 frames held, and 2% fast
        #expect(timeline.sourceFrames(forOutput: 4_900) == 9_000)
        #expect(timeline.sourceFrames(forOutput: 4_000) == 8_000, "before it, at the tempo from the start")
        #expect(timeline.sourceFrames(forOutput: 4_800) == 9_000, "never past an observation")
        #expect(timeline.sourceFrames(forOutput: 5_000) == 9_200, "after it, at the tempo from there")
        #expect(timeline.sourceFrames(forOutput: 6_000) == 10_000, "never past what was kept")
    }

    /// Trailing silence cut at the end of the last pass: the last frame out means all of it heard.
    @Test func theEndOfTheOutputIsTheEndOfTheSource() {
        var timeline = ReshapedTimeline(tempo: 1, memory: 1 << 30)
        timeline.keep(100)
        timeline.cut(50)
        timeline.observe(output: 100)
        #expect(timeline.sourceFrames(forOutput: 99) == 99)
        #expect(timeline.sourceFrames(forOutput: 100) == 150)
    }

    /// A clip looping forever with silence cut adds anchors forever; old ones go, recent answers stay right.
    @Test func oldAnchorsAreForgottenAndRecentOnesStillAnswer() {
        var timeline = ReshapedTimeline(tempo: 1, memory: 1_000)
        for _ in 0..<10_000 {
            timeline.keep(10)
            timeline.cut(5)
        }
        timeline.keep(10)
        // 10 000 rounds of 10 kept frames: output 100 000 is the start of the last kept run.
        #expect(timeline.sourceFrames(forOutput: 100_000) == 150_000)
        #expect(timeline.sourceFrames(forOutput: 99_995) == 149_990)
        #expect(timeline.sourceFrames(forOutput: 99_500) == 149_250)
    }
}
