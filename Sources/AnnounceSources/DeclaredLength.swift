import AnnounceModel
import AnnounceSystem

/// The length a WAV, AIFF or CAF header declares, read from its bytes, so that a file shorter than
/// its header (cut in a transfer) is reported as truncated. libsndfile plays what is there and
/// reports that length only.
enum DeclaredLength {
    /// WAV data sizes that mean "written to a pipe, length unknown", never "truncated".
    static let streamedDataSizes: Set<Int> = [0, 0x7FFF_FF00, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]

    /// Frames the header declares, when it is plain PCM (or float, A-law, mu-law) in RIFF,
    /// RIFX, AIFF/AIFC or CAF and the counting chunks are within `bytes`.
    static func frames(_ bytes: [UInt8]) -> Int64? {
        func ascii(_ offset: Int, _ text: String) -> Bool {
            bytes.count >= offset + 4 && bytes[offset..<offset + 4].elementsEqual(text.utf8)
        }
        if (ascii(0, "RIFF") || ascii(0, "RIFX")) && ascii(8, "WAVE") {
            return wavFrames(bytes, bigEndian: ascii(0, "RIFX"))
        }
        if ascii(0, "FORM") && (ascii(8, "AIFF") || ascii(8, "AIFC")) { return aiffFrames(bytes) }
        if ascii(0, "caff") { return cafFrames(bytes) }
        return nil
    }

    private static func integer(_ bytes: [UInt8], _ offset: Int, _ width: Int, bigEndian: Bool) -> Int? {
        guard offset >= 0, offset + width <= bytes.count else { return nil }
        let slice = bytes[offset..<offset + width]
        return (bigEndian ? Array(slice) : slice.reversed()).reduce(0) { $0 << 8 | Int($1) }
    }

    /// A block-coded WAV's (GSM 6.10, IMA and MS ADPCM, G.721) `fact` chunk: the frames it
    /// holds, which its last block pads. Nil for other codecs (an MP3's fact counts differently
    /// from its decoders) or when there is none.
    static func factFrames(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8) || bytes[0..<4].elementsEqual("RIFX".utf8),
            bytes[8..<12].elementsEqual("WAVE".utf8)
        else { return nil }
        let bigEndian = bytes[3] == UInt8(ascii: "X")
        var offset = 12
        var compressed = false
        while let size = integer(bytes, offset + 4, 4, bigEndian: bigEndian) {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            if id == "fmt " {
                guard let tag = integer(bytes, offset + 8, 2, bigEndian: bigEndian) else { return nil }
                compressed = [0x02, 0x11, 0x31, 0x40].contains(tag)
            }
            if id == "fact" {
                return compressed ? integer(bytes, offset + 8, 4, bigEndian: bigEndian).map(Int64.init) : nil
            }
            if id == "data" { return nil }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    private static func wavFrames(_ bytes: [UInt8], bigEndian: Bool) -> Int64? {
        var offset = 12
        var blockAlign: Int?
        while let size = integer(bytes, offset + 4, 4, bigEndian: bigEndian) {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            if id == "fmt " {
                // Sizes per frame hold for uncompressed codecs only: PCM, float, A-law, mu-law, extensible.
                guard let tag = integer(bytes, offset + 8, 2, bigEndian: bigEndian), [1, 3, 6, 7, 0xFFFE].contains(tag),
                    let align = integer(bytes, offset + 20, 2, bigEndian: bigEndian), align > 0
                else { return nil }
                blockAlign = align
            }
            // What writers to a pipe put there (0; arecord 0x80000000 or 0x7FFFFF00; sox and ffmpeg
            // 0xFFFFFFFF; others 0x7FFFFFFF): the size is unknown, played to the end as ffmpeg and sox do.
            if id == "data" { return Self.streamedDataSizes.contains(size) ? nil : blockAlign.map { Int64(size / $0) } }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    private static func cafFrames(_ bytes: [UInt8]) -> Int64? {
        guard let (bytesPerFrame, data) = cafChunks(bytes), let bytesPerFrame, data.size >= 4 else { return nil }
        return Int64((data.size - 4) / bytesPerFrame)  // the data starts with a 4-byte edit count
    }

    /// A CAF's data chunk: where its 8-byte size field is and what it says.
    static func cafDataSize(_ bytes: [UInt8]) -> (fieldOffset: Int, size: Int)? {
        guard bytes.starts(with: Array("caff".utf8)) else { return nil }
        return cafChunks(bytes)?.data
    }

    /// Linear PCM's bytes per frame from the desc chunk (nil for packetised codecs), and the data chunk.
    private static func cafChunks(_ bytes: [UInt8]) -> (Int?, data: (fieldOffset: Int, size: Int))? {
        var offset = 8
        var bytesPerFrame: Int?
        while let size = integer(bytes, offset + 4, 8, bigEndian: true) {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let body = offset + 12
            if id == "desc", bytes.count >= body + 24, bytes[body + 8..<body + 12].elementsEqual("lpcm".utf8),
                let packet = integer(bytes, body + 16, 4, bigEndian: true), packet > 0,
                integer(bytes, body + 20, 4, bigEndian: true) == 1
            {
                bytesPerFrame = packet  // one frame per packet of a fixed size
            }
            // -1: to the end of the file; a size past any real file is no length at all.
            if id == "data" {
                guard size >= -1, size <= Int.max / 2 else { return nil }
                return (bytesPerFrame, (offset + 4, size))
            }
            guard size >= 0, size < Int.max - offset - 12 else { return nil }  // -1: to the end, the last chunk
            offset += 12 + size
        }
        return nil
    }

    private static func aiffFrames(_ bytes: [UInt8]) -> Int64? {
        var offset = 12
        while let size = integer(bytes, offset + 4, 4, bigEndian: true) {
            if bytes[offset..<offset + 4].elementsEqual("COMM".utf8) {
                return integer(bytes, offset + 10, 4, bigEndian: true).map(Int64.init)
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }
}
