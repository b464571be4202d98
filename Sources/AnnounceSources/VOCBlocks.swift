import AnnounceModel
import AnnounceSystem

/// A Creative VOC file's block chain, walked through its input: libsndfile reads the sound data
/// of type-1 and type-9 blocks, but takes a type-2 block (sound continuation, as ffmpeg writes
/// a long file) for samples, header included, so such a file would play shifted noise.
enum VOCBlocks {
    static func hasContinuation(_ input: any ByteInput) throws(AnnounceError) -> Bool {
        let header = try input.bytes(at: 20, count: 2)
        guard header.count == 2 else { return false }
        var offset = Int64(Int(header[0]) | Int(header[1]) << 8)  // the header's own size
        for _ in 0..<100_000 {  // a bound on a hostile chain
            let read = try input.bytes(at: offset, count: 4)
            guard let type = read.first else { return false }
            let block = read + [UInt8](repeating: 0, count: 4 - read.count)  // a cut length's missing bytes are 0
            switch type {
            case 0: return false  // the terminator
            case 2: return true
            default:
                let length = Int64(Int(block[1]) | Int(block[2]) << 8 | Int(block[3]) << 16)
                offset += 4 + length
            }
        }
        return false
    }
}
