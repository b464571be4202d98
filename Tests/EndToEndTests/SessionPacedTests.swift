import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The session layer as it is *heard* (DESIGN §3, issue 4): mixing, ducking, quiet mode, a sound
/// server that dies and comes back, and alerts, on the real-time paced device of
/// Tests/Shell/paced-audio.sh (its own PulseAudio: the device-loss test kills and restarts it).
///
/// Tones that sound at once are told apart by a sliding Goertzel per tone (ToneAnalysis.envelope):
/// each test picks frequencies with a whole number of cycles in the analysis window, so a steady
/// tone leaks nothing into another's filter, and an abrupt edge is where the window's amplitude
/// crosses half the tone's level (to within the 1 ms hop). Levels are medians over 50 ms windows.
///
/// A stream that opens the device loses its first 7–9 ms inside PulseAudio (aplay -D pulse on the
/// same sink: 23644 of 24000 frames, starting mid-cycle), so a clip that opens the device reads
/// 5–9 ms short (A 1991–1995 ms of 2 s, the quiet test's 880 Hz 491 ms of 500, the first alert
/// 593–597 ms of 600); clips that join an open device read exact. Tolerances allow for it.
///
/// Each tolerance was checked against a daemon built to misbehave (run through ANNOUNCE_BIN):
/// a 30 ms duck ramp (envelope step 0.071 against the bound 0.0196, 10–90% in 25 ms against
/// 90 ms), no alert cache (repeated 54–56 ms against new 30–50 ms: the 60% rule fails), and a
/// daemon that resumes a lost device from the last heard position (resume point 2–5 ms past
/// what was recorded, total 2990–2995 ms: passes).
@Suite("Paced device: sessions as heard", .serialized, PacedAudioTrait(name: "paced-session"), .timeLimit(.minutes(3)))
struct SessionPacedTests {
    static let rate = Double(PacedAudio.rate)
    /// 25 ms: a whole number of cycles of any multiple of 40 Hz.
    static let window = 1200
    /// 1 ms.
    static let hop = 48

    private func expectExit(
        _ outcome: Outcome, _ status: Int32, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            outcome.signal == nil && outcome.status == status, "\(what): \(outcome)", sourceLocation: sourceLocation)
    }

    /// A 48 kHz stereo sine made for this test in its session directory.
    private func tone(_ session: PacedSession, _ frequency: Double, _ seconds: Double, decibels: Double = -6) throws
        -> String
    {
        let path = session.directory + "/tone-\(Int(frequency))-\(Int(seconds * 1000))ms.wav"
        try Sox.tone(
            path, frequency: frequency, seconds: seconds, decibels: decibels, rate: PacedAudio.rate, channels: 2)
        return path
    }

    /// Where `frequency` sounds in `samples` (abrupt edges to within 1 ms), and its level.
    private func spans(of frequency: Double, in samples: [Double]) -> (spans: [ClosedRange<Double>], level: Double) {
        let envelope = ToneAnalysis.envelope(
            samples, frequency: frequency, rate: Self.rate, window: Self.window, hop: Self.hop)
        let level = ToneAnalysis.plateau(envelope)
        return (ToneAnalysis.spans(envelope, level: level, rate: Self.rate, window: Self.window, hop: Self.hop), level)
    }

    private static func describe(_ spans: [ClosedRange<Double>]) -> String {
        spans.map {
            "\(PacedAnalysis.ms($0.lowerBound))–\(PacedAnalysis.ms($0.upperBound)) (\(PacedAnalysis.ms($0.upperBound - $0.lowerBound)))"
        }
        .joined(separator: ", ")
    }

    private static func decibels(_ power: Double) -> Double { 10 * log10(power) }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    // MARK: 1. mixing

    /// Two ambient sessions play at once: A (440 Hz, 2 s) and, 0.5 s into it, B (880 Hz, 1 s).
    /// A mixer that queued B would put it after A (no common window); one that cut A off would
    /// shorten A; one that crossfaded or normalised the sum would lower A while B plays (the sum
    /// of two -6 dBFS sines at 440 and 880 Hz peaks at 0.88, under the limiter's knee of -1 dBFS,
    /// so a plain sum leaves both at their own level).
    @Test("two ambient sessions mix: both tones sound at once, each for its own length")
    func ambientSessionsOverlap() async throws {
        try await withPacedSession("ambient-overlap") { session in
            try await session.start()
            // A lasts 3 s, so B (1 s, launched half a second in) sounds whole within it even when a
            // loaded machine delays B's start by a second: the overlap, not the start latency, is tested.
            let a = try tone(session, 440, 3.0)
            let b = try tone(session, 880, 1.0)
            try session.startRecording()
            let playA = session.launch(["play", a, "--category", "ambient"])
            _ = try await session.waitForEvent("A's started event") { $0.event == "started" && $0.path == a }
            try await Task.sleep(for: .seconds(0.5))  // B joins half a second into A
            let playB = session.launch(["play", b, "--category", "ambient"])
            let outcomeA = try await playA.value
            let outcomeB = try await playB.value
            let samples = try await session.stopRecording()
            expectExit(outcomeA, 0, "A (ambient)")
            expectExit(outcomeB, 0, "B (ambient, started while A played)")

            let (spansA, levelA) = spans(of: 440, in: samples)
            let (spansB, levelB) = spans(of: 880, in: samples)
            // Both above a threshold in the same 50 ms windows (amplitude 0.1: 14 dB under the clips' 0.5).
            let size = 2400
            var both = 0
            var aAlone: [Double] = []
            var aWithB: [Double] = []
            for start in stride(from: 0, to: samples.count - size, by: size) {
                let slice = samples[start..<start + size]
                let powerA = ToneAnalysis.power(of: 440, in: slice, rate: Self.rate)
                let powerB = ToneAnalysis.power(of: 880, in: slice, rate: Self.rate)
                if powerA >= 0.01 && powerB >= 0.01 { both += 1 }
                if powerA >= 0.01 && powerB < 1e-6 { aAlone.append(powerA) }
                if powerA >= 0.01 && powerB >= 0.2 { aWithB.append(powerA) }
            }
            PacedAudio.report(
                "paced ambient-overlap: A 440 Hz \(Self.describe(spansA)) level \(levelA), "
                    + "B 880 Hz \(Self.describe(spansB)) level \(levelB); both in \(both) windows of 50 ms; "
                    + "A alone \(aAlone.isEmpty ? "-" : String(format: "%.2f", Self.decibels(Self.median(aAlone)))) dB, "
                    + "with B \(aWithB.isEmpty ? "-" : String(format: "%.2f", Self.decibels(Self.median(aWithB)))) dB")

            try #require(
                spansA.count == 1 && spansB.count == 1,
                "each tone should sound once: A \(Self.describe(spansA)); B \(Self.describe(spansB)); \(session.allEvents())"
            )
            let (heardA, heardB) = (spansA[0], spansB[0])
            let lengthA = heardA.upperBound - heardA.lowerBound
            let lengthB = heardB.upperBound - heardB.lowerBound
            #expect(abs(lengthA - 3.0) <= 0.030, "A lasted \(PacedAnalysis.ms(lengthA)), not 3000 ± 30 ms")
            #expect(abs(lengthB - 1.0) <= 0.030, "B lasted \(PacedAnalysis.ms(lengthB)), not 1000 ± 30 ms")
            let overlap = min(heardA.upperBound, heardB.upperBound) - max(heardA.lowerBound, heardB.lowerBound)
            #expect(
                abs(overlap - 1.0) <= 0.030,
                "A and B sounded together for \(PacedAnalysis.ms(overlap)), not B's whole 1000 ± 30 ms: A \(Self.describe(spansA)), B \(Self.describe(spansB))"
            )
            #expect((19...21).contains(both), "both tones in \(both) windows of 50 ms, not the ~20 of a 1 s overlap")
            try #require(
                aAlone.count >= 10 && aWithB.count >= 15,
                "A alone in \(aAlone.count) windows, with B in \(aWithB.count)")
            let change = Self.decibels(Self.median(aWithB)) - Self.decibels(Self.median(aAlone))
            #expect(
                abs(change) <= 1,
                "A's level changed by \(String(format: "%.2f", change)) dB while B played: not a plain sum")
        }
    }

    // MARK: 2. ducking

    /// A bed (200 Hz, looping ambient) and, over it, an ambient --duck-others voice (1000 Hz,
    /// 1.5 s). The bed's level in 50 ms windows: before, during (from 200 ms after the voice's
    /// onset to its end) and after (from 650 ms after its end: the restore begins once the voice's
    /// last frame is heard, and reaches the ear through the sound server's 180 ms of buffer
    /// (3 periods of 60 ms), then ramps for 400 ms). The bed's envelope (25 ms windows,
    /// 5 ms hops) may change per hop at most what the raised-cosine ramps allow:
    /// A·(1 − g)·sin(π·hop/2N) for a ramp of N frames from 1 to g (GainRamp): 0.0196 down
    /// (150 ms), 0.0074 up (400 ms) for A = 0.5 and -12 dB; a step duck moves the 25 ms window by
    /// ~0.075 per 5 ms. The 10–90% times of the ramps are those of the same raised cosines seen
    /// through the same window (computed below) ± 15 ms: a straight or shorter ramp reads
    /// otherwise. 200 and 1000 Hz are far apart, so the voice's onset leaks little (≤ 0.01) into
    /// the bed's 25 ms filter.
    @Test("--duck-others lowers the bed by 12 dB with 150 ms / 400 ms raised-cosine ramps and restores it")
    func duckOthers() async throws {
        try await withPacedSession("duck-others") { session in
            try await session.start()
            let bed = try tone(session, 200, 2.0)  // 400 whole cycles: loops without a seam
            let voice = try tone(session, 1000, 1.5)
            try session.startRecording()
            let bedPlay = try await session.announce([
                "play", bed, "--category", "ambient", "--loops", "-1", "--no-wait"
            ])
            expectExit(bedPlay, 0, "the bed (--no-wait)")
            let bedID = bedPlay.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(bedID.isItemID, "play --no-wait printed \(bedPlay.stdout.debugDescription)")
            _ = try await session.waitForEvent("the bed's started event") { $0.event == "started" && $0.id == bedID }
            try await Task.sleep(for: .seconds(1.0))  // the bed alone
            let voicePlay = try await session.announce(["play", voice, "--category", "ambient", "--duck-others"])
            expectExit(voicePlay, 0, "the voice (ambient, --duck-others)")
            try await Task.sleep(for: .seconds(1.5))  // the bed comes back (180 + 400 ms) and holds its level
            let cancel = try await session.announce(["cancel", bedID])
            expectExit(cancel, 0, "cancel the bed")
            let bedEnd = try await session.waitForEvent("the bed's finished event") {
                $0.event == "finished" && $0.id == bedID
            }
            let samples = try await session.stopRecording()

            // Levels in 50 ms windows (10 and 50 cycles).
            let size = 2400
            var bedPower: [Double] = []
            var voicePower: [Double] = []
            for start in stride(from: 0, to: samples.count - size, by: size) {
                bedPower.append(ToneAnalysis.power(of: 200, in: samples[start..<start + size], rate: Self.rate))
                voicePower.append(ToneAnalysis.power(of: 1000, in: samples[start..<start + size], rate: Self.rate))
            }
            let voiceWindows = voicePower.indices.filter { voicePower[$0] >= 0.01 }
            let bedWindows = bedPower.indices.filter { bedPower[$0] >= 1e-4 }
            try #require(
                !voiceWindows.isEmpty && !bedWindows.isEmpty,
                "bed in \(bedWindows.count) windows, voice in \(voiceWindows.count)")
            let (voiceFirst, voiceLast) = (voiceWindows.first!, voiceWindows.last!)
            let (bedFirst, bedLast) = (bedWindows.first!, bedWindows.last!)
            let before = (bedFirst + 1..<voiceFirst - 2).map { bedPower[$0] }
            let during = (voiceFirst + 4..<voiceLast - 1).map { bedPower[$0] }
            let after = (voiceLast + 13..<bedLast - 1).map { bedPower[$0] }
            try #require(
                before.count >= 10 && during.count >= 20 && after.count >= 10,
                "windows before \(before.count), during \(during.count), after \(after.count); \(session.allEvents())")
            let levelBefore = Self.decibels(Self.median(before))
            let levelDuring = Self.decibels(Self.median(during))
            let levelAfter = Self.decibels(Self.median(after))
            let duck = levelDuring - levelBefore
            let restored = levelAfter - levelBefore

            // The bed's envelope: 25 ms windows every 5 ms.
            let hop = 240
            let envelope = ToneAnalysis.envelope(
                samples, frequency: 200, rate: Self.rate, window: Self.window, hop: hop)
            let amplitude = Self.median(before).squareRoot()
            let depth = amplitude * (1 - pow(10, Self.duckDecibels / 20))
            let downFrames = Self.duckDownSeconds * Self.rate
            let upFrames = Self.duckUpSeconds * Self.rate
            let downBound = depth * sin(Double.pi * Double(hop) / (2 * downFrames))
            let upBound = depth * sin(Double.pi * Double(hop) / (2 * upFrames))
            // Hops (i → i+1) by time: the duck from 100 ms before the voice's onset window (the ramp may
            // start a 60 ms mixing block before the voice's first frames) to 200 ms past it, the
            // restore from its last window to 650 ms past it; elsewhere the bed is steady (upBound).
            func hopIndex(window50 index: Int) -> Int { index * size / hop }
            let downRange = hopIndex(window50: voiceFirst - 2)..<hopIndex(window50: voiceFirst + 4)
            let upRange = hopIndex(window50: voiceLast)..<hopIndex(window50: voiceLast + 13)
            // The voice's abrupt end leaks into the bed's 25 ms filter (up to ~0.01 per hop, seen
            // when the load shifts it against the window grid). The restore cannot begin there (it
            // waits for the voice's last frame to be heard, then the device's buffer), so those
            // hops are left out, up to a filter window past the voice's last 50 ms window (its end
            // may fall just after that window's edge: 0.0106 was seen at exactly that hop, 2800 ms
            // for a voice of 1300–2800 ms); a restore that stepped there would still read a 10–90%
            // far from the raised cosine's.
            let leakStart = hopIndex(window50: voiceLast) - Self.window / hop
            let leakEnd = hopIndex(window50: voiceLast + 1) + Self.window / hop
            let voiceEndLeak = leakStart..<leakEnd
            let steadyRange = hopIndex(window50: bedFirst + 1)..<hopIndex(window50: bedLast - 1)
            var largestDown = 0.0
            var largestUp = 0.0
            var largestSteady = 0.0
            var steadyAt = 0
            var upAt = 0
            for index in steadyRange where index + 1 < envelope.count && !voiceEndLeak.contains(index) {
                let step = abs(envelope[index + 1] - envelope[index])
                if downRange.contains(index) {
                    largestDown = max(largestDown, step)
                } else if upRange.contains(index) {
                    if step > largestUp { (largestUp, upAt) = (step, index) }
                } else if step > largestSteady {
                    (largestSteady, steadyAt) = (step, index)
                }
            }
            // 10–90% times of the two transitions in the envelope, and of the model.
            func transition(_ range: Range<Int>, from high: Double, to low: Double) -> Double? {
                let ten = high - 0.1 * (high - low)
                let ninety = high - 0.9 * (high - low)
                let falling = high > low
                let slice = Array(envelope[max(0, range.lowerBound)..<min(envelope.count, range.upperBound)])
                guard let first = slice.firstIndex(where: { falling ? $0 <= ten : $0 >= ten }),
                    let last = slice[first...].firstIndex(where: { falling ? $0 <= ninety : $0 >= ninety })
                else { return nil }
                return Double((last - first) * hop) / Self.rate
            }
            let modelDown = Self.modelTransition(rampSeconds: Self.duckDownSeconds, window: Self.window, hop: hop)
            let modelUp = Self.modelTransition(rampSeconds: Self.duckUpSeconds, window: Self.window, hop: hop)
            let high = amplitude
            let low = Self.median(during).squareRoot()
            let down = transition(downRange.lowerBound - 10..<downRange.upperBound + 10, from: high, to: low)
            let up = transition(upRange.lowerBound - 10..<upRange.upperBound + 10, from: low, to: high)
            // No click: the largest sample-to-sample step is at most the two sines' own (A·2πf/rate),
            // from 50 ms after the bed's first window (PulseAudio drops the first ~8 ms of a stream
            // that opens the device, so the bed starts mid-cycle: a step that aplay -D pulse shows
            // too) to the window before the cancel (a lone stream's stop drops at once).
            var largestSampleStep = 0.0
            var stepAt = 0
            for index in (bedFirst + 2) * size..<(bedLast - 1) * size
            where abs(samples[index] - samples[index - 1]) > largestSampleStep {
                largestSampleStep = abs(samples[index] - samples[index - 1])
                stepAt = index
            }
            let slopes = 0.5 * 2 * Double.pi * (200 + 1000) / Self.rate

            PacedAudio.report(
                "paced duck-others: bed \(String(format: "%.2f", levelBefore)) dB before, "
                    + "\(String(format: "%.2f", levelDuring)) during (\(String(format: "%+.2f", duck)) dB), "
                    + "\(String(format: "%.2f", levelAfter)) after (\(String(format: "%+.2f", restored)) dB); "
                    + "envelope steps per 5 ms: down \(String(format: "%.4f", largestDown)) (bound \(String(format: "%.4f", downBound))), "
                    + "up \(String(format: "%.4f", largestUp)) at \(PacedAnalysis.ms(Double(upAt * hop) / Self.rate)) (bound \(String(format: "%.4f", upBound))), "
                    + "steady \(String(format: "%.4f", largestSteady)) at \(PacedAnalysis.ms(Double(steadyAt * hop) / Self.rate)); 10–90%: down \(down.map(PacedAnalysis.ms) ?? "-") "
                    + "(model \(PacedAnalysis.ms(modelDown))), up \(up.map(PacedAnalysis.ms) ?? "-") (model \(PacedAnalysis.ms(modelUp))); "
                    + "largest sample step \(String(format: "%.4f", largestSampleStep)) at \(PacedAnalysis.ms(Double(stepAt) / Self.rate)) "
                    + "(sines' own \(String(format: "%.4f", slopes))); voice \(voiceFirst * 50)–\((voiceLast + 1) * 50) ms"
            )

            #expect(
                abs(duck + 12) <= 1,
                "the bed dropped \(String(format: "%.2f", -duck)) dB under the voice, not 12 ± 1 dB")
            #expect(abs(restored) <= 0.5, "the bed came back \(String(format: "%+.2f", restored)) dB off its level")
            #expect(
                largestDown <= 1.25 * downBound,
                "the bed's envelope moved \(String(format: "%.4f", largestDown)) in 5 ms while ducking; a 150 ms raised cosine moves at most \(String(format: "%.4f", downBound))"
            )
            #expect(
                largestUp <= 1.25 * upBound,
                "the bed's envelope moved \(String(format: "%.4f", largestUp)) in 5 ms while coming back; a 400 ms raised cosine moves at most \(String(format: "%.4f", upBound))"
            )
            #expect(
                largestSteady <= 1.25 * upBound,
                "the bed's envelope jumped \(String(format: "%.4f", largestSteady)) in 5 ms outside the ramps")
            if let down {
                #expect(
                    abs(down - modelDown) <= 0.015,
                    "the duck took \(PacedAnalysis.ms(down)) (10–90%), a 150 ms raised cosine \(PacedAnalysis.ms(modelDown))"
                )
            } else {
                Issue.record("no 10–90% duck transition in the bed's envelope")
            }
            if let up {
                #expect(
                    abs(up - modelUp) <= 0.015,
                    "the restore took \(PacedAnalysis.ms(up)) (10–90%), a 400 ms raised cosine \(PacedAnalysis.ms(modelUp))"
                )
            } else {
                Issue.record("no 10–90% restore transition in the bed's envelope")
            }
            #expect(
                largestSampleStep <= slopes + 0.02,
                "a click: the recording steps by \(String(format: "%.4f", largestSampleStep)) between samples; the two sines step by at most \(String(format: "%.4f", slopes))"
            )
            #expect(bedEnd.outcome?.kind == "cancelled", "the bed's end: \(bedEnd)")
        }
    }

    /// DESIGN §3: the default duck level and the ramps (GainRamp.duckDownSeconds, duckUpSeconds).
    static let duckDecibels = -12.0
    static let duckDownSeconds = 0.150
    static let duckUpSeconds = 0.400

    /// The 10–90% time of a raised-cosine ramp of `rampSeconds` as ToneAnalysis.envelope sees it:
    /// a window of `window` frames moved by `hop` over g(k) = (1 − cos(πk/N))/2.
    static func modelTransition(rampSeconds: Double, window: Int, hop: Int) -> Double {
        let n = Int(rampSeconds * rate)
        let pad = window
        let gain = (0..<n + 2 * pad).map { k -> Double in
            let position = Double(min(max(k - pad, 0), n))
            return (1 - cos(Double.pi * position / Double(n))) / 2
        }
        // A window's mean gain (a slowly changing gain on a steady tone reads as its mean).
        var sums = [0.0]
        for g in gain { sums.append(sums.last! + g) }
        let envelope = stride(from: 0, through: gain.count - window, by: hop).map {
            (sums[$0 + window] - sums[$0]) / Double(window)
        }
        let first = envelope.firstIndex { $0 >= 0.1 }!
        let last = envelope.firstIndex { $0 >= 0.9 }!
        return Double((last - first) * hop) / rate
    }

    // MARK: 3. quiet mode

    /// With quiet mode on, an ambient (440 Hz, 2 s) and a solo-ambient (660 Hz) item end
    /// silenced (75) and nothing of them reaches the sink; a playback item (880 Hz, 0.5 s) plays
    /// whole. "Nothing" in 50 ms windows (22, 33 and 44 cycles: the steady playback tone leaks
    /// nothing into the others' filters): power under 1e-5 (0.3 ms of a silenced tone at the
    /// clips' level) where the playback tone does not sound, and under 1e-3 (3 ms) in the windows
    /// where it sounds: its two edge windows leak into the others' filters (seen -46 dB at 440
    /// and -37 dB at 660 Hz).
    @Test("quiet mode: ambient and solo-ambient are not heard at all, playback is heard whole")
    func quietMode() async throws {
        try await withPacedSession("quiet") { session in
            try await session.start()
            let clips = session.paced.clips
            try await session.runtime.control("quiet", "on")
            try session.startRecording()
            let ambient = try await session.announce(["play", clips.a2, "--category", "ambient"])
            let solo = try await session.announce(["play", clips.c])
            let playback = try await session.announce(["play", clips.b, "--category", "playback"])
            let samples = try await session.stopRecording()
            try await session.runtime.control("quiet", "off")

            expectExit(ambient, 75, "ambient in quiet mode")
            #expect(ambient.stderr.contains("silenced"), "\(ambient)")
            expectExit(solo, 75, "solo-ambient in quiet mode")
            expectExit(playback, 0, "playback in quiet mode")
            let size = 2400
            var loudest440 = 0.0
            var loudest660 = 0.0
            var loudest440With880 = 0.0
            var loudest660With880 = 0.0
            for start in stride(from: 0, to: samples.count - size, by: size) {
                let slice = samples[start..<start + size]
                let power440 = ToneAnalysis.power(of: 440, in: slice, rate: Self.rate)
                let power660 = ToneAnalysis.power(of: 660, in: slice, rate: Self.rate)
                if ToneAnalysis.power(of: 880, in: slice, rate: Self.rate) < 1e-6 {
                    (loudest440, loudest660) = (max(loudest440, power440), max(loudest660, power660))
                } else {
                    (loudest440With880, loudest660With880) = (
                        max(loudest440With880, power440), max(loudest660With880, power660)
                    )
                }
            }
            let (spans880, level880) = spans(of: 880, in: samples)
            func dB(_ power: Double) -> String { String(format: "%.1f dB", Self.decibels(power)) }
            PacedAudio.report(
                "paced quiet: loudest 50 ms windows without / with the playback tone: 440 Hz \(dB(loudest440)) / "
                    + "\(dB(loudest440With880)), 660 Hz \(dB(loudest660)) / \(dB(loudest660With880)); 880 Hz \(Self.describe(spans880)) level \(level880)"
            )
            #expect(
                loudest440 < 1e-5 && loudest440With880 < 1e-3,
                "the silenced ambient tone was heard: 50 ms windows at \(dB(loudest440)) / \(dB(loudest440With880)) with the playback tone"
            )
            #expect(
                loudest660 < 1e-5 && loudest660With880 < 1e-3,
                "the silenced solo-ambient tone was heard: 50 ms windows at \(dB(loudest660)) / \(dB(loudest660With880)) with the playback tone"
            )
            try #require(spans880.count == 1, "the playback tone: \(Self.describe(spans880))")
            let length = spans880[0].upperBound - spans880[0].lowerBound
            #expect(abs(length - 0.5) <= 0.030, "playback lasted \(PacedAnalysis.ms(length)), not 500 ± 30 ms")
            #expect(abs(20 * log10(level880 / 0.5)) <= 1, "playback at amplitude \(level880), not the clip's 0.5")
        }
    }

    // MARK: 4. alerts

    static let alertTones: [Double] = [520, 680, 840, 1000, 1160]

    /// Five `announce alert` calls (without --wait) 100 ms apart, each a 0.6 s tone at -20 dBFS
    /// (five at once sum to 0.5 at most: no limiting). Each is heard once for 600 ± 30 ms at
    /// its own level (± 1 dB), and they overlap: at some moment at least three sound at once
    /// (all five, when the five commands start on time), and each overlaps another. Each command
    /// returned before its alert ended (it does not wait).
    @Test("five overlapping alerts: every one is heard whole, at once with the others")
    func overlappingAlerts() async throws {
        try await withPacedSession("alerts") { session in
            try await session.start()
            let paths = try Self.alertTones.map { try tone(session, $0, 0.6, decibels: -20) }
            try session.startRecording()
            var calls: [Task<(Outcome, Double), any Error>] = []
            for (index, path) in paths.enumerated() {
                if index > 0 { try await Task.sleep(for: .milliseconds(100)) }
                calls.append(
                    Task {
                        let outcome = try await session.announce(["alert", path])
                        return (outcome, Date().timeIntervalSince1970)
                    })
            }
            var returned: [Double] = []
            for (index, call) in calls.enumerated() {
                let (outcome, time) = try await call.value
                expectExit(outcome, 0, "alert \(Int(Self.alertTones[index])) Hz")
                returned.append(time)
            }
            var finished: [WireEvent] = []
            for path in paths {
                finished.append(
                    try await session.waitForEvent("the finished event of \(path)") {
                        $0.event == "finished" && $0.path == path
                    })
            }
            let samples = try await session.stopRecording()

            var heard: [ClosedRange<Double>] = []
            var report: [String] = []
            for (index, frequency) in Self.alertTones.enumerated() {
                let (found, level) = spans(of: frequency, in: samples)
                report.append("\(Int(frequency)) Hz \(Self.describe(found)) at \(String(format: "%.3f", level))")
                #expect(finished[index].outcome?.kind == "played", "alert \(Int(frequency)) Hz: \(finished[index])")
                #expect(
                    returned[index] < finished[index].time,
                    "`announce alert` \(Int(frequency)) Hz returned \(PacedAnalysis.ms(returned[index] - finished[index].time)) after its alert ended: it waited"
                )
                guard found.count == 1 else {
                    Issue.record("alert \(Int(frequency)) Hz should sound once: \(Self.describe(found))")
                    continue
                }
                heard.append(found[0])
                let length = found[0].upperBound - found[0].lowerBound
                #expect(
                    abs(length - 0.6) <= 0.030,
                    "alert \(Int(frequency)) Hz lasted \(PacedAnalysis.ms(length)), not 600 ± 30 ms")
                #expect(
                    abs(20 * log10(level / 0.1)) <= 1,
                    "alert \(Int(frequency)) Hz at amplitude \(level), not its own 0.1")
            }
            // How many sound at once, every millisecond.
            var most = 0
            if let start = heard.map(\.lowerBound).min(), let end = heard.map(\.upperBound).max() {
                for t in stride(from: start, through: end, by: 0.001) {
                    most = max(most, heard.filter { $0.contains(t) }.count)
                }
            }
            let lonely = heard.indices.filter { i in
                !heard.indices.contains { j in j != i && heard[i].overlaps(heard[j]) }
            }
            PacedAudio.report("paced alerts: \(report.joined(separator: "; ")); at most \(most) at once")
            #expect(most >= 3, "at most \(most) alerts sounded at once: \(report)")
            #expect(lonely.isEmpty, "alerts that overlapped no other: \(lonely.map { Int(Self.alertTones[$0]) })")
        }
    }

    /// A repeated alert starts without decoding. Latency = the `started` event's time minus the
    /// moment the alert request was sent (over the socket: a client process's start-up, 20–400 ms
    /// on a loaded machine, would drown the difference). Nothing else plays: an alert joining a
    /// running sound-server buffer waits for room, which comes a 60 ms period at a time and would
    /// drown the difference too; the idle device stays open between alerts (the daemon's grace).
    /// The file is 28 s of 96 kHz stereo (5.4 M samples), so its decode is measurable; five rounds
    /// of (a new copy: decoded; the same copy again: cached), medians compared (the repeat under
    /// 60% of the first). Each alert is cancelled once it started.
    @Test("a repeated alert starts sooner than a new one: the daemon keeps decoded alerts")
    func alertCache() async throws {
        try await withPacedSession("alert-cache") { session in
            try await session.start()
            // A sound server's plugin: the long periods this test's design assumes.
            #expect(
                session.daemonLog.contains("device 'pulse' opened as int16 48000 Hz 2 ch, 3 periods of 60 ms"),
                "the device's buffering: \(session.daemonLog)")
            let big = session.directory + "/alert-28s-96k.wav"
            try Sox.tone(big, frequency: 400, seconds: 28, decibels: -30, rate: 96000, channels: 2)
            let client = try session.runtime.client()

            /// nil when the device had to be opened for the alert (the daemon's 100 ms grace ran
            /// out on a slow turn): opening costs more than decoding and would hide the difference.
            func alertLatency(_ path: String) async throws -> Double? {
                let request = #"{"v":1,"op":"alert","alert":{"path":"\#(path)","gain":1}}"#
                let sent = Date().timeIntervalSince1970
                let reply = try await offPool { try client.call(request) }
                let id = try #require(reply.ids?.first, "alert \(path) refused: \(reply)")
                let started = try await session.waitForEvent("the alert's started event") {
                    $0.event == "started" && $0.id == id
                }
                let opened = session.allEvents().contains {
                    $0.event == "device-opened" && $0.time >= sent && $0.time <= started.time
                }
                try await session.runtime.control("cancel", id)
                _ = try await session.waitForEvent("the alert's finished event") {
                    $0.event == "finished" && $0.id == id
                }
                return opened ? nil : started.time - sent
            }
            var fresh: [Double] = []
            var cached: [Double] = []
            var copies = 0
            while fresh.count < 5 || cached.count < 5, copies < 15 {
                let copy = session.directory + "/alert-\(copies).wav"
                copies += 1
                try FileManager.default.copyItem(atPath: big, toPath: copy)
                if let latency = try await alertLatency(copy) { fresh.append(latency) }
                if let latency = try await alertLatency(copy) { cached.append(latency) }
            }
            try #require(
                fresh.count >= 3 && cached.count >= 3,
                "the device was opened for most alerts: \(fresh.count) new and \(cached.count) repeated measured in \(copies) rounds"
            )
            let (medianFresh, medianCached) = (Self.median(fresh), Self.median(cached))
            PacedAudio.report(
                "paced alert-cache: new file \(fresh.map(PacedAnalysis.ms)) (median \(PacedAnalysis.ms(medianFresh))), "
                    + "repeated \(cached.map(PacedAnalysis.ms)) (median \(PacedAnalysis.ms(medianCached)))")
            // Seen: new 27–50 ms, repeated 2–8 ms (medians). Without the cache both would read alike:
            // "faster" alone could pass by chance, so the repeat must take under 60% of a first
            // play's latency.
            #expect(
                medianCached < 0.6 * medianFresh,
                "a repeated alert started in \(PacedAnalysis.ms(medianCached)) (median), a new one in \(PacedAnalysis.ms(medianFresh)): no gain from the cache"
            )
        }
    }

    // MARK: 5. a sound server that dies and comes back

    /// A 3 s solo-ambient clip (440 Hz); after ~1 s the paced PulseAudio is SIGKILLed. The
    /// daemon must see the write fail, emit route-change old-device-unavailable, retry the
    /// device, and when the server is back (same socket and sink; Tests/Shell/paced-audio.sh
    /// start-server records the sink from before any client can connect) emit
    /// new-device-available and play the rest: outcome played, and what was heard before the
    /// kill plus what was heard after the restart is the clip's 3 s ± 50 ms (issue 4 asked for
    /// ± 100 ms; a resume from the heard point reads 2990–2995 ms, one from the written point
    /// 2900–2915 ms, so ± 100 ms would pass it by a hair). The point the daemon resumed from (the
    /// `started` event's heard) must be what was recorded before the kill, −40/+50 ms.
    @Test("the sound server dies mid-clip and comes back: the clip resumes and is heard whole")
    func serverDiesAndComesBack() async throws {
        try await withPacedSession("server-restart") { session in
            let paced = session.paced
            var serverDown = false
            do {
                try await session.start()
                let clip = paced.clips.a3
                try session.startRecording()
                let play = session.launch(["play", clip])
                let started = try await session.waitForEvent("the clip's started event") {
                    $0.event == "started" && $0.path == clip
                }
                try await Task.sleep(for: .seconds(1))
                let killed = Date().timeIntervalSince1970
                try paced.killServer()
                serverDown = true
                let lost = try await session.waitForEvent("route-change old-device-unavailable", timeout: 10) {
                    $0.event == "route-change" && $0.reason == "old-device-unavailable"
                }
                let before = try await session.stopRecording(tail: 0)  // its recorder died with the server
                let afterPath = session.directory + "/after-restart.s16"
                let restart = try paced.startServer(recording: afterPath)
                serverDown = false
                let back = try await session.waitForEvent("route-change new-device-available", timeout: 15) {
                    $0.event == "route-change" && $0.reason == "new-device-available"
                }
                let outcome = try await play.value
                try await Task.sleep(for: .seconds(0.3))  // nothing more may sound after the end
                try paced.stopServerRecorder()
                let after = try PacedAudio.monoSamples(ofRecording: afterPath)

                let first = PacedAnalysis.segments(before, tones: [440])
                let rest = PacedAnalysis.segments(after, tones: [440])
                let resumed = session.allEvents().last {
                    $0.event == "started" && $0.path == clip && $0.time > started.time
                }
                let finished = session.event("finished", path: clip)
                let total = (first + rest).map(\.length).reduce(0, +)
                PacedAudio.report(
                    "paced server-restart: loss reported \(PacedAnalysis.ms(lost.time - killed)) after the kill command, "
                        + "back \(PacedAnalysis.ms(back.time - lost.time)) after the loss; before the kill \(first), after the restart \(rest), "
                        + "total \(PacedAnalysis.ms(total)); resumed at heard=\(resumed?.heard.map { String($0) } ?? "-"); "
                        + "\(finished.map { "\($0)" } ?? "no finished event"); \(restart)")

                expectExit(outcome, 0, "the clip (lost device, resumed)")
                #expect(
                    finished?.outcome?.kind == "played",
                    "finished: \(String(describing: finished)); events: \(session.allEvents())")
                #expect(
                    lost.device == "pulse",
                    "route-change old-device-unavailable names \(String(describing: lost.device))")
                #expect(
                    back.device == "pulse", "route-change new-device-available names \(String(describing: back.device))"
                )
                try #require(
                    first.count == 1 && rest.count == 1,
                    "440 Hz before the kill: \(first); after the restart: \(rest); events: \(session.allEvents()); daemon log: \(session.daemonLog)"
                )
                #expect(
                    (0.8...1.5).contains(first[0].length),
                    "before the kill the clip sounded \(PacedAnalysis.ms(first[0].length)), not ~1 s")
                // What the daemon resumed from against what was heard before the kill: the recording
                // misses the first ~8 ms (PulseAudio drops them when a stream opens the device) and at
                // most ~20 ms in flight to the recorder at the kill, so a resume from the heard point
                // reads up to 30 ms over it; the heard point is published with each write, a 60 ms
                // period apart on a sound server, so it may also trail by up to a period (a replay).
                // A resume from the written point reads a whole device buffer (180 ms) more.
                if let resumedAt = resumed?.heard {
                    let ahead = resumedAt - first[0].length
                    #expect(
                        (-0.075...0.050).contains(ahead),
                        "the daemon resumed at \(PacedAnalysis.ms(resumedAt)), \(PacedAnalysis.ms(ahead)) past the \(PacedAnalysis.ms(first[0].length)) heard before the loss: \(ahead > 0 ? "it skipped what the dead server had not played (frames written counted as heard?)" : "it replays audio")"
                    )
                } else {
                    Issue.record("no started event with heard= after the restart: \(session.allEvents())")
                }
                // A replay of up to a period (above) is allowed; a skip is not.
                #expect(
                    total >= 2.950 && total <= 3.075,
                    "heard \(PacedAnalysis.ms(first[0].length)) + \(PacedAnalysis.ms(rest[0].length)) = \(PacedAnalysis.ms(total)), not 2950–3075 ms: \(total < 3 ? "skipped" : "replayed") audio across the loss"
                )
            } catch {
                if serverDown { _ = try? paced.startServer(recording: "/dev/null") }
                throw error
            }
        }
    }
}
