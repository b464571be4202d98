import Foundation
import Testing

/// A WAV captured from ALSA's file device is read by other programs as what it holds: ffprobe
/// names its sample format and ffmpeg's decode of it is the clip's reference decode. Float
/// sources are the case that once went wrong (float samples under an integer PCM header).
@Suite("Captured WAVs read back with ffmpeg")
struct CaptureReadBackTests {
    static let floatSources =
        Clips.all.filter { $0.sourceFormat == .float32 }.map(\.file)
        + ["wav24.wav", "wav16-stereo.wav"]

    @Test("ffprobe names the captured format; ffmpeg decodes it as the reference", arguments: floatSources)
    func readBack(_ file: String) async throws {
        let clip = Clips.named(file)
        let play = try await Playback.run([try Harness.fixture(clip.file)], debug: false, label: "readback-" + file)
        try #require(play.outcome.status == 0, "\(play.outcome)")

        let probe = try await Runner.run(
            "ffprobe",
            [
                "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels",
                "-of", "default=noprint_wrappers=1", play.capturePath
            ])
        try #require(probe.status == 0, "\(probe)")
        let fields = Dictionary(
            probe.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { first, _ in first })
        let codec = clip.format == .int16 ? "pcm_s16le" : "pcm_s32le"
        #expect(fields["codec_name"] == codec, "\(probe.stdout)")
        #expect(fields["sample_rate"] == String(clip.sampleRate))
        #expect(fields["channels"] == String(clip.channels))

        // ffmpeg's reading of the capture, as raw integers at the captured width.
        let raw = play.capturePath + ".ffmpeg.\(clip.format.referenceExtension)"
        let decode = try await Runner.run(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-i", play.capturePath,
                "-c:a", codec, "-f", String(codec.dropFirst(4)), raw
            ])
        try #require(decode.status == 0, "\(decode)")
        let decoded = try PCM.reference(raw, channels: clip.channels)
        expectSamples(
            decoded, match: try Clips.load(clip), tolerance: clip.fullReference.tolerance,
            "\(file): ffmpeg's decode of the capture vs \(clip.fullReference.file)")
    }
}
