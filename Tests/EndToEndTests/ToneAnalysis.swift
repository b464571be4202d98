import Foundation

/// Which test tone sounds when: a Goertzel filter per window at each
/// candidate frequency (DESIGN §7). Clips in daemon tests are pure tones.
enum ToneAnalysis {
    /// Power of `frequency` in `samples` (mono), normalised so a full-scale
    /// sine gives about 1 and silence 0.
    static func power(of frequency: Double, in samples: ArraySlice<Double>, rate: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let coefficient = 2 * cos(2 * Double.pi * frequency / rate)
        var previous = 0.0
        var beforePrevious = 0.0
        for sample in samples {
            let current = sample + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        let n = Double(samples.count)
        return 4 * power / (n * n)
    }

    /// The tone in each `window`-second window: the candidate with the most power,
    /// or nil when none reaches `threshold` (silence, or a fade).
    static func timeline(
        _ samples: [Double], rate: Double, tones: [Double], window: Double = 0.02,
        threshold: Double = 0.001
    ) -> [Double?] {
        let size = max(1, Int(window * rate))
        return stride(from: 0, to: samples.count - size + 1, by: size).map { start in
            let slice = samples[start..<start + size]
            let powers = tones.map { power(of: $0, in: slice, rate: rate) }
            guard let best = powers.indices.max(by: { powers[$0] < powers[$1] }), powers[best] >= threshold else {
                return nil
            }
            return tones[best]
        }
    }

    /// Consecutive runs of the same tone: (tone, number of windows). Silence is a nil tone.
    static func runs(_ timeline: [Double?]) -> [(tone: Double?, windows: Int)] {
        var runs: [(tone: Double?, windows: Int)] = []
        for tone in timeline {
            if let last = runs.last, last.tone == tone {
                runs[runs.count - 1].windows += 1
            } else {
                runs.append((tone, 1))
            }
        }
        return runs
    }

    /// The tones in the order heard, each with the windows it spans: runs shorter than
    /// `minimum` windows (a fade, a boundary window, a blip of another tone) are left out,
    /// silence is dropped, and the same tone either side of what was left out is one segment.
    static func segments(_ timeline: [Double?], minimum: Int = 3) -> [(tone: Double, windows: Range<Int>)] {
        var segments: [(tone: Double, windows: Range<Int>)] = []
        var index = 0
        for run in runs(timeline) {
            defer { index += run.windows }
            guard let tone = run.tone, run.windows >= minimum else { continue }
            if let last = segments.last, last.tone == tone {
                segments[segments.count - 1].windows = last.windows.lowerBound..<index + run.windows
            } else {
                segments.append((tone, index..<index + run.windows))
            }
        }
        return segments
    }
}

// MARK: - Tones that overlap (SessionPacedTests)

/// Where tones that sound at the same time start and end, and how loud each is: a sliding Goertzel
/// per tone, not the loudest-tone timeline above. Choose tones with a whole number of cycles in
/// the window (e.g. multiples of 40 Hz for 25 ms): a steady tone then leaks nothing into another's
/// filter, whatever the window's offset.
extension ToneAnalysis {
    /// Amplitude of `frequency` (a sine of amplitude a reads a) in windows of `window` samples
    /// starting every `hop` samples: element i covers samples i·hop ..< i·hop + window.
    static func envelope(_ samples: [Double], frequency: Double, rate: Double, window: Int, hop: Int) -> [Double] {
        guard samples.count >= window else { return [] }
        return stride(from: 0, through: samples.count - window, by: hop).map {
            power(of: frequency, in: samples[$0..<$0 + window], rate: rate).squareRoot()
        }
    }

    /// The stretches (in seconds from the recording's start) where a sliding `envelope` reaches
    /// `fraction` of `level`. With `fraction` 0.5 the window is half over the tone at each
    /// crossing, so an abrupt edge is placed at the window's middle to within a hop. Runs
    /// shorter than `minimum` seconds are left out.
    static func spans(
        _ envelope: [Double], level: Double, fraction: Double = 0.5, rate: Double, window: Int, hop: Int,
        minimum: Double = 0.02
    ) -> [ClosedRange<Double>] {
        var spans: [ClosedRange<Double>] = []
        var first: Int?
        func time(_ index: Int) -> Double { (Double(index * hop) + Double(window) / 2) / rate }
        for index in 0...envelope.count {
            let value = index < envelope.count ? envelope[index] : -1  // one past the end closes a run
            if value >= fraction * level {
                if first == nil { first = index }
            } else if let start = first {
                first = nil
                let span = time(start)...time(index)
                if span.upperBound - span.lowerBound >= minimum { spans.append(span) }
            }
        }
        return spans
    }

    /// The level a tone holds: the median of the envelope where it exceeds a fifth of its maximum.
    static func plateau(_ envelope: [Double]) -> Double {
        guard let peak = envelope.max(), peak > 0 else { return 0 }
        let loud = envelope.filter { $0 > peak / 5 }.sorted()
        return loud[loud.count / 2]
    }
}
