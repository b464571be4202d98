import Foundation
import Testing

/// An utterance interrupted mid-sentence, as heard on the paced device: after the interruption
/// it goes on from the start of the sentence it was in, never mid-word. What follows the
/// interrupting tone in the recording is compared with espeak-ng's own render of that
/// sentence, resampled by sox to the sink's rate (normalised correlation, best lag within
/// ±40 ms): it must match the sentence's start and not the point where it was cut.
@Suite("Paced device: speech resumes at the sentence", .serialized, PacedAudioTrait(name: "paced-speech"), .timeLimit(.minutes(2)))
struct SpeechPacedTests {
    static let sentences = ["Alpha is the first sentence of this test.",
                            "Bravo is the second sentence, and it goes on for quite a while longer than the first.",
                            "Charlie ends it."]

    /// espeak-ng's render of one sentence at the sink's rate, from its first sound.
    private func reference(_ sentence: String) async throws -> (samples: [Double], seconds: Double) {
        let wav = try Harness.capturePath("speech-ref") + ".wav"
        let raw = wav + ".f32"
        let render = try await Runner.run("sh", ["-c", "printf '%s' \"$1\" | espeak-ng --stdout -b 1 > \"$2\"", "sh", sentence, wav])
        try #require(render.status == 0, "\(render)")
        let sox = try await Runner.run("sox", ["-V1", wav, "-t", "raw", "-e", "floating-point", "-b", "32", "-r", "\(PacedAudio.rate)", raw])
        try #require(sox.status == 0, "\(sox)")
        let samples = try PCM.reference(raw, channels: 1).samples
        return (samples, Double(samples.count) / Double(PacedAudio.rate))
    }

    private static func onset(_ samples: [Double], from start: Int) -> Int? {
        samples[start...].firstIndex { abs($0) > 0.02 }
    }

    /// The best normalised correlation of `window` samples of `heard` from `at` with `reference`
    /// from its onset, over lags of ±40 ms.
    private static func match(_ heard: [Double], at: Int, _ reference: [Double], window: Int) -> Double {
        guard let start = onset(reference, from: 0) else { return 0 }
        let wanted = reference[start..<min(reference.count, start + window)]
        let lag = PacedAudio.rate * 40 / 1000
        var best = 0.0
        for offset in stride(from: max(0, at - lag), through: at + lag, by: 1) where offset + wanted.count <= heard.count {
            let got = heard[offset..<(offset + wanted.count)]
            let dot = zip(got, wanted).reduce(0) { $0 + $1.0 * $1.1 }
            let energy = got.reduce(0) { $0 + $1 * $1 } * wanted.reduce(0) { $0 + $1 * $1 }
            if energy > 0 { best = max(best, dot / energy.squareRoot()) }
        }
        return best
    }

    @Test("preempted 1 s into its second sentence, the utterance resumes at that sentence's start")
    func resumesAtTheSentence() async throws {
        try await withPacedSession("speech-resume") { session in
            try await session.start()
            let first = try await reference(Self.sentences[0])
            let second = try await reference(Self.sentences[1])
            try session.startRecording()
            let say = session.launch(["say"] + Self.sentences)
            let started = try await session.waitForEvent("the utterance's started event") { $0.event == "started" && ($0.path ?? "").hasPrefix("say:") }
            let tone = try await session.schedule(session.paced.clips.b, priority: "high", at: started.time + first.seconds + 1.0)
            let outcome = try await say.value, finishedTone = try await tone.value
            let heard = try await session.stopRecording()
            #expect(outcome.status == 0, "say: \(outcome)")
            #expect(finishedTone.outcome?.kind == "played")

            // Speech has energy near every tone now and then: the tone is the one steady 0.5 s run.
            let segments = PacedAnalysis.segments(heard, minimum: 20)
            let b = try #require(segments.first { $0.tone == PacedClips.bTone && abs($0.length - 0.5) < 0.05 },
                                 "the 880 Hz tone is not in the recording: \(segments)")
            let afterTone = try #require(Self.onset(heard, from: Int(b.end * Double(PacedAudio.rate)) + 240), "nothing after the tone")
            let window = PacedAudio.rate * 3 / 10
            let atSentence = Self.match(heard, at: afterTone, second.samples, window: window)
            // Where it was cut: 1 s into the sentence (what a resume at the frame would play).
            let cutPoint = Array(second.samples[min(second.samples.count - 1, PacedAudio.rate)...])
            let atCut = Self.match(heard, at: afterTone, cutPoint, window: window)
            PacedAudio.report("paced speech resume: tone \(b), correlation with the sentence's start \(atSentence), with the cut point \(atCut)")
            #expect(atSentence >= 0.9, "after the tone: correlation \(atSentence) with the second sentence's start")
            #expect(atCut < atSentence - 0.2, "it sounds like the cut point (\(atCut)) as much as the sentence start (\(atSentence))")
            let interruption = try #require(session.allEvents().first { $0.event == "interruption-began" && ($0.path ?? "").hasPrefix("say:") })
            #expect(abs((interruption.heard ?? 0) - (first.seconds + 1.0)) < 0.3, "heard at the interruption: \(interruption)")
        }
    }
}
