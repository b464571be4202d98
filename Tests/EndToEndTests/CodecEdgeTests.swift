import Foundation
import Testing

/// Files libsndfile reads differently from sox and ffmpeg, made here by those tools: a VOC with
/// continuation blocks is named, not played shifted; a GSM 6.10 WAV plays its `fact` length;
/// a chained Ogg plays its first stream and says so.
@Suite("libsndfile's edges")
struct CodecEdgeTests {
    private func made(_ name: String, _ tool: String, _ arguments: (String) -> [String]) async throws -> String {
        let path = try Harness.capturePath(name)
        let made = try await Runner.run(tool, arguments(path))
        try #require(made.status == 0, "\(tool): \(made)")
        return path
    }

    @Test("a VOC as ffmpeg writes it (continuation blocks) is named, 65; one as sox writes it plays")
    func vocWithContinuationBlocks() async throws {
        let ffmpegVOC = try await made("ff", "/usr/bin/ffmpeg") {
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=0.5:sample_rate=44100",
                "-c:a", "pcm_s16le", "-f", "voc", $0.replacingOccurrences(of: ".wav", with: ".voc")
            ]
        }.replacingOccurrences(of: ".wav", with: ".voc")
        let refused = try await Runner.announce(["play", "-d", "null", ffmpegVOC])
        #expect(
            refused.status == 65
                && refused.stderrLines
                    == ["announce: \(ffmpegVOC): VOC with continuation blocks (as ffmpeg writes it) is not supported"],
            "\(refused)")
        let soxVOC = try await made("sx", "/usr/bin/sox") {
            [
                "-n", "-r", "44100", "-c", "1", "-b", "16", $0.replacingOccurrences(of: ".wav", with: ".voc"), "synth",
                "0.5", "sine", "440"
            ]
        }.replacingOccurrences(of: ".wav", with: ".voc")
        let info = try await Runner.announce(["info", soxVOC])
        #expect(info.status == 0, "\(info)")
    }

    @Test(
        "a GSM 6.10 WAV plays the frames its fact chunk says (8000), as sox and ffmpeg do, not its padded blocks (8320)"
    )
    func gsmPlaysItsFactLength() async throws {
        let gsm = try await made("gsm", "/usr/bin/sox") {
            ["-n", "-r", "8000", "-c", "1", "-e", "gsm-full-rate", $0, "synth", "1", "sine", "440"]
        }
        let capture = try Harness.capturePath("gsm-play")
        let play = try await Runner.announce(["play", "-d", Harness.fileDevice(capture), gsm])
        #expect(play.status == 0, "\(play)")
        let captured = try await Runner.run("/usr/bin/soxi", ["-s", capture])
        let reference = try await Runner.run("/usr/bin/soxi", ["-s", gsm])
        #expect(captured.stdout == reference.stdout && captured.stdout.hasPrefix("8000"), "\(captured) vs \(reference)")
    }

    @Test("a chained Ogg (two streams one after the other) plays its first stream and says so, not silently")
    func chainedOggIsSaidSo() async throws {
        var parts: [String] = []
        for frequency in [440, 660] {
            parts.append(
                try await made("link\(frequency)", "/usr/bin/ffmpeg") {
                    [
                        "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=\(frequency):d=0.5",
                        "-c:a", "libvorbis", "-f", "ogg", $0
                    ]
                })
        }
        let chained = try Harness.capturePath("chained")
        try Data(parts.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }.joined()).write(
            to: URL(fileURLWithPath: chained))
        let play = try await Runner.announce(["play", "-d", "null", chained])
        #expect(
            play.status == 0
                && play.stderrLines
                    == [
                        "announce: warning: \(chained): more than one Ogg stream (chained or multiplexed): only the first plays"
                    ],
            "\(play)")
        let single = try await Runner.announce(["play", "-d", "null", parts[0]])
        #expect(single.status == 0 && single.stderr.isEmpty, "\(single)")
    }
}
