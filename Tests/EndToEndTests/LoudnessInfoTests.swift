import Foundation
import Testing

/// `announce info` measures loudness (EBU R128, libebur128) as ffmpeg's `ebur128` filter does
/// with `peak=true`: each file's integrated loudness and true peak, read from `info --json` by
/// JSONSerialization, against ffmpeg's summary on the same file.
@Suite("Loudness in info, beside ffmpeg's ebur128")
struct LoudnessInfoTests {
    /// ffmpeg's summary: integrated loudness (LUFS) and true peak (dBFS, 4× oversampled).
    static func ffmpegLoudness(_ path: String) async throws -> (integrated: Double, truePeak: Double) {
        let outcome = try await Runner.run(
            "ffmpeg",
            [
                "-nostdin", "-nostats", "-hide_banner", "-i", path, "-af", "ebur128=peak=true",
                "-f", "null", "-"
            ])
        try #require(outcome.status == 0, "ffmpeg: \(outcome)")
        let summary = try #require(outcome.stderr.components(separatedBy: "Summary:").last)
        func value(_ label: String) throws -> Double {
            let line = try #require(
                summary.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) },
                "no \(label) in \(summary)")
            let number = line.split(separator: " ").dropFirst().first { Double($0) != nil }
            return try #require(number.flatMap { Double($0) }, "\(line)")
        }
        return (try value("I:"), try value("Peak:"))
    }

    static func announceLoudness(_ path: String) async throws -> [String: Any] {
        let outcome = try await Runner.announce(["info", "--json", path])
        try #require(outcome.status == 0, "\(outcome)")
        let object = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
        return try #require(object?["loudness"] as? [String: Any], "\(outcome.stdout)")
    }

    @Test(
        "integrated loudness within 0.3 LU and true peak within 0.3 dB of ffmpeg's, mono to 5.1, 22.05 to 48 kHz, every codec",
        arguments: [
            "tone440-4s.wav", "wav16-stereo.wav", "cbr128.mp3", "flac16.flac", "vorbis.ogg", "speech.wav",
            "reshape/tone-48000-6.wav", "reshape/tone-22050-2.wav"
        ])
    func beside(_ fixture: String) async throws {
        let path = try Harness.fixture(fixture)
        let ours = try await Self.announceLoudness(path)
        let theirs = try await Self.ffmpegLoudness(path)
        let integrated = try #require(ours["integrated"] as? Double, "\(ours)")
        let truePeak = try #require(ours["truePeak"] as? Double, "\(ours)")
        #expect(abs(integrated - theirs.integrated) <= 0.3, "\(integrated) LUFS, ffmpeg \(theirs.integrated)")
        #expect(abs(truePeak - theirs.truePeak) <= 0.3, "\(truePeak) dBTP, ffmpeg \(theirs.truePeak)")
    }

    @Test(
        "a clip of silence has no integrated loudness (nothing above the gate): absent from --json, 'none' in the text")
    func silence() async throws {
        let path = try Harness.capturePath("silence") + ".wav"
        let sox = try await Runner.run("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", path, "trim", "0", "2"])
        try #require(sox.status == 0, "\(sox)")
        let ours = try await Self.announceLoudness(path)
        #expect(ours["integrated"] == nil, "\(ours)")
        let text = try await Runner.announce(["info", path])
        #expect(text.status == 0 && text.stdout.contains("loudness   none, true peak "), "\(text)")
    }
}
