import Foundation
import Testing

/// A VBR MP3 without a Xing header: libmpg123 estimates its length from the first frames (here
/// 11.3 s for 4.0 s). `play --json`, its finished event and `info` all give the exact length,
/// the number of frames mpg123's own decode of the file has.
/// A FLAC whose STREAMINFO total is 0 (unknown) is counted the same way.
@Suite("Lengths are exact at play time")
struct LengthTests {
    @Test("finished event's duration and info's frames are the decoded length",
          arguments: ["vbr-no-xing.mp3", "damaged/zero-total.flac"])
    func exactWithoutXing(_ file: String) async throws {
        let path = try Harness.fixture(file)
        let reference = path + (file.hasSuffix(".mp3") ? ".ref.f32" : ".ref.s16")
        let frames = try PCM.reference(reference, channels: 2).frames
        let rate = 44100.0
        let play = try await Runner.announce(["play", "--json", "-d", "null", path])
        try #require(play.status == 0, "\(play)")
        let lines = play.stdout.split(separator: "\n")
        let finished = try #require(try lines.compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "finished" }, "no finished event: \(play.stdout)")
        let duration = try #require(finished["duration"] as? Double, "\(finished)")
        #expect(abs(duration - Double(frames) / rate) < 0.001, "duration \(duration) s vs \(Double(frames) / rate) s decoded")
        #expect(finished["frames"] as? Int == frames)

        let info = try await Runner.announce(["info", "--json", path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == frames)
    }
}
