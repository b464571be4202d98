import Foundation
import Testing

/// An utterance interrupted mid-sentence, as heard on the paced device: after the interruption
/// it goes on from the start of the sentence it was in, never mid-word. What follows the
/// interrupting tone in the recording is compared with espeak-ng's own render of that
/// sentence, resampled by sox to the sink's rate (normalised correlation, best lag within
/// ±40 ms): it must match the sentence's start and not the point where it was cut.
@Suite(
    "Paced device: speech resumes at the sentence", .serialized, PacedAudioTrait(name: "paced-speech"),
    .timeLimit(.minutes(2)))
struct SpeechPacedTests {
    static let sentences = [
        "Alpha is the first sentence of this test.",
        "Bravo is the second sentence, and it goes on for quite a while longer than the first.",
        "Charlie ends it."
    ]

    /// espeak-ng's render of one sentence at the sink's rate.
    private func reference(_ sentence: String) async throws -> (samples: [Double], seconds: Double) {
        let samples = try await SpeechAudio.samples(try await SpeechAudio.espeakRender(sentence), rate: PacedAudio.rate)
        return (samples, Double(samples.count) / Double(PacedAudio.rate))
    }

    private static func onset(_ samples: [Double], from start: Int) -> Int? {
        samples[start...].firstIndex { abs($0) > 0.02 }
    }

    /// The best normalised correlation of `window` samples of `heard` from `at` with `reference`
    /// from its onset, over lags of ±40 ms: every 8th lag, then each lag around the best.
    private static func match(_ heard: [Double], at: Int, _ reference: [Double], window: Int) -> Double {
        guard let start = onset(reference, from: 0) else { return 0 }
        let wanted = Array(reference[start..<min(reference.count, start + window)])
        let wantedEnergy = wanted.reduce(0) { $0 + $1 * $1 }
        func correlation(_ offset: Int) -> Double {
            guard offset >= 0, offset + wanted.count <= heard.count else { return 0 }
            return heard.withUnsafeBufferPointer { got in
                var dot = 0.0
                var energy = 0.0
                for index in 0..<wanted.count {
                    let sample = got[offset + index]
                    dot += sample * wanted[index]
                    energy += sample * sample
                }
                return energy * wantedEnergy > 0 ? dot / (energy * wantedEnergy).squareRoot() : 0
            }
        }
        let lag = PacedAudio.rate * 40 / 1000
        let coarse = stride(from: at - lag, through: at + lag, by: 8).max { correlation($0) < correlation($1) } ?? at
        return (coarse - 8...coarse + 8).map(correlation).max() ?? 0
    }

    @Test("preempted 1 s into its second sentence, the utterance resumes at that sentence's start")
    func resumesAtTheSentence() async throws {
        try await withPacedSession("speech-resume") { session in
            try await session.start()
            let first = try await reference(Self.sentences[0])
            let second = try await reference(Self.sentences[1])
            try session.startRecording()
            let say = session.launch(["say"] + Self.sentences)
            let started = try await session.waitForEvent("the utterance's started event") {
                $0.event == "started" && ($0.path ?? "").hasPrefix("say:")
            }
            let tone = try await session.schedule(
                session.paced.clips.b, priority: "high", at: started.time + first.seconds + 1.0)
            let outcome = try await say.value
            let finishedTone = try await tone.value
            let heard = try await session.stopRecording()
            #expect(outcome.status == 0, "say: \(outcome)")
            #expect(finishedTone.outcome?.kind == "played")

            // Speech has energy near every tone now and then: the tone is the one steady 0.5 s run.
            let segments = PacedAnalysis.segments(heard, minimum: 20)
            let b = try #require(
                segments.first { $0.tone == PacedClips.bTone && abs($0.length - 0.5) < 0.05 },
                "the 880 Hz tone is not in the recording: \(segments)")
            let afterTone = try #require(
                Self.onset(heard, from: Int(b.end * Double(PacedAudio.rate)) + 240), "nothing after the tone")
            let window = PacedAudio.rate * 3 / 10
            let atSentence = Self.match(heard, at: afterTone, second.samples, window: window)
            // Where it was cut: 1 s into the sentence (what a resume at the frame would play).
            let cutPoint = Array(second.samples[min(second.samples.count - 1, PacedAudio.rate)...])
            let atCut = Self.match(heard, at: afterTone, cutPoint, window: window)
            PacedAudio.report(
                "paced speech resume: tone \(b), correlation with the sentence's start \(atSentence), with the cut point \(atCut)"
            )
            #expect(atSentence >= 0.9, "after the tone: correlation \(atSentence) with the second sentence's start")
            #expect(
                atCut < atSentence - 0.2,
                "it sounds like the cut point (\(atCut)) as much as the sentence start (\(atSentence))")
            let interruption = try #require(
                session.allEvents().first { $0.event == "interruption-began" && ($0.path ?? "").hasPrefix("say:") })
            #expect(
                abs((interruption.heard ?? 0) - (first.seconds + 1.0)) < 0.3,
                "heard at the interruption: \(interruption)")
        }
    }

    /// espeak-ng's render of one sentence at its own 22050 Hz, as sox reads it.
    private func render22k(_ sentence: String) async throws -> [Double] {
        try await SpeechAudio.samples(try await SpeechAudio.espeakRender(sentence))
    }

    /// The position the spool holds for the one item, in frames, when it holds one.
    private static func spooledHeard(_ runtime: DaemonRuntime) -> Int? {
        for name in runtime.spoolEntries() where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: runtime.spoolPath + "/" + name),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { continue }
            return object["heardFrames"] as? Int
        }
        return nil
    }

    @Test(
        "killed with SIGKILL mid-utterance, the restarted daemon renders it again and resumes at the sentence it had reached"
    )
    func resumesAfterACrash() async throws {
        try await withPacedSession("speech-crash") { session in
            try await session.start()
            let sentences = Self.sentences + ["Delta closes the test with a last sentence of its own."]
            var renders: [[Double]] = []
            for sentence in sentences { renders.append(try await render22k(sentence)) }
            let starts = renders.indices.map { renders[..<$0].reduce(0) { $0 + $1.count } }
            let say = session.launch(["say"] + sentences)
            _ = try await session.waitForEvent("the utterance's started event") {
                $0.event == "started" && ($0.path ?? "").hasPrefix("say:")
            }
            // The daemon writes the playing item's position to the spool every 5 s: wait for one
            // inside the second sentence or later, then kill it.
            let deadline = monotonicNow() + 30
            var heard = 0
            while heard < starts[1] {
                try #require(monotonicNow() < deadline, "no position past the first sentence was spooled within 30 s")
                try await Task.sleep(for: .milliseconds(20))
                heard = Self.spooledHeard(session.runtime) ?? 0
            }
            let capture = try Harness.capturePath("speech-crash")
            try await session.crashDaemon(restartOn: Harness.fileDevice(capture))
            let outcome = try await say.value
            #expect(outcome.status == 0, "say, across the crash: \(outcome)")
            // The capture is whole once the device is closed (its WAV header then says its length).
            let watcher = try await session.runtime.subscribe()
            if try await session.runtime.status().deviceOpen {
                _ = try await offPool { try watcher.events(until: { $0.event == "device-closed" }, timeout: 10) }
            }

            let sentence = try #require(starts.lastIndex { $0 <= heard })
            let resumed = try await SpeechAudio.samples(capture)
            let window = 6615
            try #require(resumed.count > window, "the restarted daemon wrote \(resumed.count) frames")
            try #require(renders[sentence].count > window)
            let correlation = SpeechAudio.correlation(resumed[..<window], renders[sentence][..<window])
            let rest = renders[sentence...].reduce(0) { $0 + $1.count }
            PacedAudio.report(
                "paced speech crash: spooled at \(heard) frames (sentence \(sentence + 1)); after the restart "
                    + "\(resumed.count) frames, correlation \(correlation) with that sentence's start")
            #expect(
                correlation >= 0.95,
                "after the restart: correlation \(correlation) with sentence \(sentence + 1)'s start")
            #expect(
                abs(Double(resumed.count) / Double(rest) - 1) < 0.05,
                "after the restart \(resumed.count) frames; sentences \(sentence + 1)… are \(rest)")
        }
    }

    @Test(
        "--drop-after counts sentences: preempted with 90% of its audio but 1 of its 2 sentences heard, an utterance resumes"
    )
    func dropAfterCountsSentences() async throws {
        try await withPacedSession("speech-drop") { session in
            try await session.start()
            let sentences = [
                "Hi there.",
                "This second sentence is a good deal longer than the first one, and it runs on for a while."
            ]
            let lengths = try await sentences.asyncMap { try await render22k($0).count }
            let total = Double(lengths.reduce(0, +)) / 22050
            let say = session.launch(["say", "--drop-after", "0.8"] + sentences)
            let started = try await session.waitForEvent("the utterance's started event") {
                $0.event == "started" && ($0.path ?? "").hasPrefix("say:")
            }
            let tone = try await session.schedule(
                session.paced.clips.b, priority: "high", at: started.time + total * 0.9)
            let outcome = try await say.value
            let finishedTone = try await tone.value
            #expect(finishedTone.outcome?.kind == "played")
            let interruption = session.allEvents().first {
                $0.event == "interruption-began" && ($0.path ?? "").hasPrefix("say:")
            }
            let heard = try #require(interruption?.heard, "no interruption of the utterance: \(session.allEvents())")
            try #require(
                heard / total >= 0.8, "the test meant to preempt it past 80% of its audio; heard \(heard) of \(total) s"
            )
            #expect(outcome.status == 0, "by sentences 50% was heard, so it resumes and plays to the end: \(outcome)")
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
