import Foundation
import Testing

/// The fixtures are what their names say: a newer sox or ffmpeg must not quietly turn an
/// extensible WAV into a plain one, or drop the cover art, and weaken the tests.
@Suite("Fixtures are what the tests need")
struct FixtureTests {
    private func bytes(_ name: String) throws -> [UInt8] {
        let path = try Harness.fixture(name)
        return try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) }, "cannot read \(path)")
    }

    private func contains(_ haystack: [UInt8], _ needle: String, within limit: Int = .max) -> Bool {
        let needle = Array(needle.utf8)
        let end = min(haystack.count, limit) - needle.count
        guard end >= 0 else { return false }
        return (0...end).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    private func le32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    @Test func containersAndCodecs() throws {
        // WAVE_FORMAT_EXTENSIBLE (0xFFFE) in the fmt chunk of the 6-channel WAV.
        let ext = try bytes("wavext-6ch.wav")
        #expect(String(decoding: ext[12..<16], as: UTF8.self) == "fmt " && ext[20] == 0xFE && ext[21] == 0xFF)
        let rf64 = try bytes("rf64.wav")
        let caf = try bytes("clip.caf")
        let aiff = try bytes("clip.aiff")
        let floatAIFC = try bytes("float.aifc")
        let sowtAIFC = try bytes("sowt.aifc")
        let opus = try bytes("opus.opus")
        let vorbis = try bytes("vorbis.ogg")
        #expect(String(decoding: rf64.prefix(4), as: UTF8.self) == "RF64")
        #expect(String(decoding: caf.prefix(4), as: UTF8.self) == "caff")
        #expect(contains(floatAIFC, "AIFC", within: 12) && contains(floatAIFC, "fl32", within: 64))
        #expect(contains(sowtAIFC, "AIFC", within: 12) && contains(sowtAIFC, "sowt", within: 64))
        #expect(contains(aiff, "AIFF", within: 12))
        #expect(contains(opus, "OpusHead", within: 64))
        #expect(contains(vorbis, "vorbis", within: 64))
    }

    @Test func mp3Tags() throws {
        let cover = try bytes("cover.mp3")
        #expect(cover.starts(with: Array("ID3".utf8)) && cover[3] == 3, "ID3v2.3 tag expected")
        #expect(
            contains(cover, "APIC", within: 4096) && contains(cover, "PNG", within: 4096),
            "embedded PNG picture expected")
        let cut = try bytes("bad/cut-mid-frame.mp3")
        #expect(contains(cut, "Info", within: 512) || contains(cut, "Xing", within: 512), "Info/Xing header expected")
    }

    @Test func badInputsAreBadTheRightWay() throws {
        let random = try bytes("bad/random.mp3")
        #expect(random.count == 65536)
        #expect(!(random[0] == 0xFF && random[1] & 0xE0 == 0xE0) && !random.starts(with: Array("ID3".utf8)))
        let huge = try bytes("bad/huge-data-size.wav")
        #expect(String(decoding: huge[36..<40], as: UTF8.self) == "data" && le32(huge, 40) == 0x7FFF_FFF0)
        #expect(huge.count == 44 + 22050 * 4, "0.5 s of real samples after the header")
        let truncated = try bytes("bad/truncated-header.wav")
        let zeroChannels = try bytes("bad/zero-channels.wav")
        let zeroRate = try bytes("bad/zero-rate.wav")
        #expect(truncated.count == 20)
        #expect(le32(zeroChannels, 20) >> 16 == 0)
        #expect(le32(zeroRate, 24) == 0)
        let unreadable = try Harness.fixture("bad/no-permission.wav")
        let mode = try FileManager.default.attributesOfItem(atPath: unreadable)[.posixPermissions] as? Int
        #expect(mode == 0)
    }
}
