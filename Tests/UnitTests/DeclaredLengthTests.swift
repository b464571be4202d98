import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

@Suite struct DeclaredLengthTests {
    private func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    private func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    private func wav(tag: Int = 1, channels: Int = 2, bits: Int = 16, dataSize: Int, listSize: Int? = nil) -> [UInt8] {
        let block = channels * bits / 8
        let fmt = le16(tag) + le16(channels) + le32(44100) + le32(44100 * block) + le16(block) + le16(bits)
        var body = Array("WAVE".utf8) + Array("fmt ".utf8) + le32(fmt.count) + fmt
        if let listSize {
            body += Array("LIST".utf8) + le32(listSize) + [UInt8](repeating: 0, count: listSize + listSize % 2)
        }
        body += Array("data".utf8) + le32(dataSize)
        return Array("RIFF".utf8) + le32(body.count + dataSize) + body
    }

    @Test func wavDataChunkGivesFramesWhateverComesBefore() {
        #expect(DeclaredLength.frames(wav(dataSize: 4 * 1000)) == 1000)
        #expect(DeclaredLength.frames(wav(dataSize: 4 * 1000, listSize: 301)) == 1000)  // odd chunk, padded
        #expect(DeclaredLength.frames(wav(channels: 1, bits: 24, dataSize: 3 * 7)) == 7)
    }

    @Test func streamedWAVHasNoLength() {
        #expect(DeclaredLength.frames(wav(dataSize: 0xFFFF_FFFF)) == nil)
        #expect(DeclaredLength.frames(wav(dataSize: 0)) == nil)
    }

    @Test func compressedWAVHasNoFrameCountInItsSize() {
        #expect(DeclaredLength.frames(wav(tag: 0x11, dataSize: 4096)) == nil)  // IMA ADPCM
    }

    @Test func aiffCommonChunkGivesFrames() {
        let comm = [0, 2] + [0, 0, 0x30, 0x39] + [0, 16] + [UInt8](repeating: 0, count: 10)
        let body = Array("AIFF".utf8) + Array("COMM".utf8) + [0, 0, 0, UInt8(comm.count)] + comm
        #expect(DeclaredLength.frames(Array("FORM".utf8) + [0, 0, 0, 0] + body) == 12345)
    }

    @Test func cutHeadersAndOtherFormatsGiveNothing() {
        #expect(DeclaredLength.frames(Array(wav(dataSize: 400).prefix(30))) == nil)
        #expect(DeclaredLength.frames(Array("fLaC".utf8)) == nil)
        #expect(DeclaredLength.frames([]) == nil)
    }
}
