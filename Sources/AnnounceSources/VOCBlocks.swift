#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

/// A Creative VOC file's block chain, walked with pread: libsndfile reads the sound data of
/// type-1 and type-9 blocks, but takes a type-2 block (sound continuation, as ffmpeg writes
/// a long file) for samples, header included, so such a file would play shifted noise.
enum VOCBlocks {
    static func hasContinuation(fd: Int32) -> Bool {
        var header = [UInt8](repeating: 0, count: 2)
        guard pread(fd, &header, 2, 20) == 2 else { return false }
        var offset = off_t(Int(header[0]) | Int(header[1]) << 8)  // the header's own size
        for _ in 0..<100_000 {  // a bound on a hostile chain
            var block = [UInt8](repeating: 0, count: 4)
            guard pread(fd, &block, 4, offset) >= 1 else { return false }
            switch block[0] {
            case 0: return false  // the terminator
            case 2: return true
            default:
                let length = off_t(Int(block[1]) | Int(block[2]) << 8 | Int(block[3]) << 16)
                offset += 4 + length
            }
        }
        return false
    }
}
