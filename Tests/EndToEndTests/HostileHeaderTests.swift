import Foundation
import Testing

/// Header fields at their extremes, made by patching good fixtures: a size that overflows
/// arithmetic must fail cleanly (never a crash), and a WAV written to a pipe is no damage.
@Suite("Hostile header fields")
struct HostileHeaderTests {
    /// `fixture` with the 8 or 4 bytes after the first `marker` replaced by `field`.
    private func patched(_ fixture: String, after marker: String, with field: [UInt8], name: String) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Harness.fixture(fixture))))
        let needle = Array(marker.utf8)
        let at = try #require(
            (0...(bytes.count - needle.count)).first { bytes[$0..<$0 + needle.count].elementsEqual(needle) })
        bytes.replaceSubrange(at + needle.count..<at + needle.count + field.count, with: field)
        let path = try Harness.capturePath(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a CAF whose data chunk claims 2^63-1 bytes: one line, 65, no crash; and no crash in the daemon either")
    func cafWithAHugeDataSize() async throws {
        let path = try patched(
            "clip.caf", after: "data", with: [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], name: "huge-caf")
        let info = try await Runner.announce(["info", path])
        #expect(info.signal == nil && (info.status == 0 || info.status == 65), "\(info)")
        #expect(info.status == 0 || info.stderrLines.count == 1, "\(info)")
        let capture = try Harness.capturePath("huge-caf-play")
        let play = try await Runner.announce(["play", "-q", "-d", Harness.fileDevice(capture), path])
        #expect(play.signal == nil && play.status == info.status, "\(play)")
    }

    @Test("a WAV written to a pipe (data size 0x80000000, as arecord writes it) plays whole with no warning")
    func pipedWAVIsNotTruncated() async throws {
        let path = try patched("wav16-stereo.wav", after: "data", with: [0x00, 0x00, 0x00, 0x80], name: "piped")
        let info = try await Runner.announce(["info", "--json", path])
        #expect(info.status == 0 && info.stderr.isEmpty, "\(info)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(object["truncated"] as? Bool == false && object["damage"] == nil, "\(info.stdout)")
        let capture = try Harness.capturePath("piped-play")
        let play = try await Runner.announce(["play", "-d", Harness.fileDevice(capture), path])
        #expect(play.status == 0 && play.stderr.isEmpty, "\(play)")
        // sox counts what was captured: the whole clip.
        let reference = try await Runner.run("/usr/bin/soxi", ["-s", try Harness.fixture("wav16-stereo.wav")])
        let captured = try await Runner.run("/usr/bin/soxi", ["-s", capture])
        #expect(captured.stdout == reference.stdout && !captured.stdout.isEmpty, "\(captured) vs \(reference)")
    }

    @Test("--loops 1000000 of a clip over 1000 s is accepted (its wait estimate is past any real wait, not an error)")
    func manyLoopsOfALongClip() async throws {
        let path = try Harness.capturePath("long-8k")
        try Sox.tone(path, frequency: 440, seconds: 1001, rate: 8000, channels: 1)
        defer { unlink(path) }
        try await withDaemonRuntime { runtime in
            let queued = try await runtime.announce(["play", "--no-wait", "--loops", "1000000", "-d", "null", path])
            #expect(queued.status == 0 && queued.stderr.isEmpty, "\(queued)")
            try await runtime.control("stop")
        }
    }

    @Test("an error about a file whose name holds a newline is still one line on stderr")
    func aNewlineInANameStaysOneLine() async throws {
        let path = try Harness.capturePath("name").replacingOccurrences(of: "/name-", with: "/bad\nname-")
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let play = try await Runner.announce(["play", "-d", "null", path])
        #expect(play.status == 65 && play.stderrLines.count == 1 && play.stderr.contains("bad\\nname"), "\(play)")
    }
}
