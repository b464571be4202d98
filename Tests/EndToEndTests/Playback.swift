import Foundation
import Testing

/// `announce: debug: PATH: N frames as FORMAT RATE Hz C ch on DEVICE`, logged per file played.
struct DebugLine: Sendable, Equatable {
    var path: String
    var frames: Int
    var format: SampleFormat
    var sampleRate: Int
    var channels: Int
    var device: String

    init?(_ line: String) {
        guard let match = line.wholeMatch(of: /announce: debug: (.+): (\d+) frames as (\w+) (\d+) Hz (\d+) ch on (.+)/),
            let frames = Int(match.2), let format = SampleFormat(rawValue: String(match.3)),
            let rate = Int(match.4), let channels = Int(match.5)
        else { return nil }
        path = String(match.1)
        self.frames = frames
        self.format = format
        sampleRate = rate
        self.channels = channels
        device = String(match.6)
    }
}

/// One `announce play` onto ALSA's file device.
struct Playback: Sendable {
    var outcome: Outcome
    var capturePath: String
    /// The debug lines, in order (empty when run without ANNOUNCE_LOG=debug).
    var debugLines: [DebugLine]
    /// stderr lines that are not debug lines: errors and warnings.
    var otherStderrLines: [String]
    /// The capture, if the device was opened.
    var capture: WAVCapture?

    /// Plays `files` with `options` onto a fresh capture file, with ANNOUNCE_LOG=debug
    /// unless `debug` is false.
    static func run(
        _ files: [String], _ options: [String] = [], debug: Bool = true,
        label: String = "play"
    ) async throws -> Playback {
        let capture = try Harness.capturePath(label)
        let outcome = try await Runner.announce(
            ["play"] + files + ["-d", Harness.fileDevice(capture)] + options,
            environment: ["ANNOUNCE_LOG": debug ? "debug" : nil])
        var debugLines: [DebugLine] = []
        var others: [String] = []
        for line in outcome.stderrLines {
            if let parsed = DebugLine(line) { debugLines.append(parsed) } else { others.append(line) }
        }
        let captured = FileManager.default.fileExists(atPath: capture) ? try WAVCapture(path: capture) : nil
        return Playback(
            outcome: outcome, capturePath: capture, debugLines: debugLines,
            otherStderrLines: others, capture: captured)
    }

    /// The captured samples, read in the format the debug line says was negotiated.
    /// Records an issue (and returns nil) when the play failed or said nothing usable.
    func output(sourceLocation: SourceLocation = #_sourceLocation) -> PCM? {
        guard outcome.status == 0, outcome.signal == nil else {
            Issue.record("play failed: \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        guard let last = debugLines.last else {
            Issue.record("no debug line on stderr: \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        guard
            debugLines.allSatisfy({
                $0.format == last.format && $0.channels == last.channels && $0.sampleRate == last.sampleRate
            })
        else {
            Issue.record("files played in different formats: \(debugLines)", sourceLocation: sourceLocation)
            return nil
        }
        guard let capture else {
            Issue.record("nothing captured at \(capturePath): \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        // ALSA's file plugin writes integer PCM headers only: announce never gives it floats.
        #expect(
            capture.formatTag == 1 && last.format != .float32, "capture header is integer PCM",
            sourceLocation: sourceLocation)
        #expect(capture.channels == last.channels, "capture header channels", sourceLocation: sourceLocation)
        #expect(capture.sampleRate == last.sampleRate, "capture header rate", sourceLocation: sourceLocation)
        #expect(
            capture.bitsPerSample == last.format.bytesPerSample * 8, "capture header bits",
            sourceLocation: sourceLocation)
        return PCM(format: last.format, channels: last.channels, bytes: capture.data)
    }

    /// True when the capture file is absent or holds no sample bytes.
    var capturedNothing: Bool { capture.map { $0.data.isEmpty } ?? true }
}
