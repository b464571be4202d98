import Foundation
import Testing

/// A VBR MP3 without a Xing header: libmpg123 estimates its length from the first frames (here
/// 11.3 s for 4.0 s). `play --json`, its finished event and `info` all give the exact length,
/// the number of frames mpg123's own decode of the file has.
/// A FLAC whose STREAMINFO total is 0 (unknown) is counted the same way; one whose total is
/// beyond its frames (truncated) lasts what decoded, not what its header says.
@Suite("Lengths are exact at play time")
struct LengthTests {
    @Test(
        "finished event's duration and info's frames are the decoded length",
        arguments: ["vbr-no-xing.mp3", "damaged/zero-total.flac", "damaged/beyond-total.flac"])
    func exactWithoutXing(_ file: String) async throws {
        let path = try Harness.fixture(file)
        let reference = path + (file.hasSuffix(".mp3") ? ".ref.f32" : ".ref.s16")
        let frames = try PCM.reference(reference, channels: 2).frames
        let rate = 44100.0
        let play = try await Runner.announce(["play", "--json", "-d", "null", path])
        try #require(play.status == 0, "\(play)")
        #expect(play.stderrLines.count == (file.contains("beyond") ? 1 : 0), "\(play)")
        let lines = play.stdout.split(separator: "\n")
        let finished = try #require(
            try lines.compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.first { $0["event"] as? String == "finished" }, "no finished event: \(play.stdout)")
        let duration = try #require(finished["duration"] as? Double, "\(finished)")
        #expect(
            abs(duration - Double(frames) / rate) < 0.001,
            "duration \(duration) s vs \(Double(frames) / rate) s decoded")
        #expect(finished["frames"] as? Int == frames)

        let info = try await Runner.announce(["info", "--json", path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == frames)
    }

    @Test("the started event carries no guessed length: the exact one or none")
    func startedCarriesNoGuess() async throws {
        let path = try Harness.fixture("long-no-xing.mp3")
        let seconds = Double(try PCM.reference(path + ".ref.f32", channels: 1).frames) / 44100
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: "null")
            let events = try await runtime.subscribe()
            let play = try await runtime.announce(["play", path])
            #expect(play.status == 0, "\(play)")
            let seen = try await offPool { try events.events { $0.event == "finished" } }
            let started = try #require(seen.first { $0.event == "started" }, "\(seen)")
            if let duration = started.duration {
                #expect(abs(duration - seconds) < 0.001, "started says \(duration) s, \(seconds) s decode")
            }
            let finished = try #require(seen.last?.duration)
            #expect(abs(finished - seconds) < 0.001, "finished says \(finished) s, \(seconds) s decode")
        }
    }
}
