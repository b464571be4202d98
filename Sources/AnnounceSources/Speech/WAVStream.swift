import AnnounceModel

/// The header of 16-bit PCM WAV read from a stream: a speech engine's output (whose sizes are
/// placeholders: it is written before the length is known) or a render in the cache. Only
/// what speech engines write; files go through the decoders.
struct WAVStreamHeader: Equatable {
    var sampleRate: Int
    var channels: Int
    /// Bytes of data the header declares (unreliable from a pipe).
    var dataBytes: UInt32

    static let canonicalSize = 44

    /// Parses from `next(count)`, which returns exactly `count` bytes or fewer at the end.
    static func read(_ next: (Int) throws(AnnounceError) -> [UInt8]) throws(AnnounceError) -> WAVStreamHeader {
        func fail(_ reason: String) -> AnnounceError { .undecodable(path: "speech", reason: reason) }
        let riff = try next(12)
        guard riff.count == 12, riff[0..<4].elementsEqual("RIFF".utf8), riff[8..<12].elementsEqual("WAVE".utf8) else {
            throw fail(riff.isEmpty ? "no audio" : "not WAV audio")
        }
        var format: (rate: Int, channels: Int)?
        while true {
            let chunk = try next(8)
            guard chunk.count == 8 else { throw fail("WAV header ends before its data") }
            let size = UInt32(chunk[4]) | UInt32(chunk[5]) << 8 | UInt32(chunk[6]) << 16 | UInt32(chunk[7]) << 24
            if chunk[0..<4].elementsEqual("data".utf8) {
                guard let format else { throw fail("WAV data before its format") }
                return WAVStreamHeader(sampleRate: format.rate, channels: format.channels, dataBytes: size)
            }
            guard size <= 1 << 16 else { throw fail("WAV header chunk of \(size) bytes") }
            let body = try next(Int(size + size % 2))
            guard body.count == Int(size + size % 2) else { throw fail("WAV header ends early") }
            if chunk[0..<4].elementsEqual("fmt ".utf8) {
                guard size >= 16 else { throw fail("WAV format chunk too short") }
                func u16(_ at: Int) -> Int { Int(body[at]) | Int(body[at + 1]) << 8 }
                let rate = u16(4) | u16(6) << 16
                guard u16(0) == 1, u16(14) == 16 else { throw fail("not 16-bit PCM") }
                guard (1...Limits.maxChannels).contains(u16(2)), Limits.sampleRates.contains(rate) else {
                    throw fail("WAV format out of range")
                }
                format = (rate, u16(2))
            }
        }
    }

    /// A canonical 44-byte header for `dataBytes` of 16-bit PCM.
    func bytes() -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xff), UInt8(value >> 8 & 0xff)] }
        let blockAlign = channels * 2
        return Array("RIFF".utf8) + le32(dataBytes &+ 36) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(channels)
            + le32(UInt32(sampleRate)) + le32(UInt32(sampleRate * blockAlign)) + le16(blockAlign) + le16(16)
            + Array("data".utf8) + le32(dataBytes)
    }
}
