import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A live stream's segment as a decoder's bytes: a pipe read once, in order, from where it is
/// now. The last 64 KiB read are kept, so a decoder may look back a little (libmpg123 does as
/// it syncs); further back, or another reader, there is none. Its length is never known (a
/// live stream has no end to wait for: asking fails), and being read while it arrives, its
/// decoders never look for its end. Takes `fd`.
final class PipeInput: ByteInput, @unchecked Sendable {
    let name: String
    private let fd: Int32
    /// The most recent bytes read, and the offset of the first of them.
    private var kept: [UInt8] = []
    private var keptStart: Int64 = 0
    private static let keep = 64 << 10

    init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    deinit { close(fd) }

    var length: Int64? { nil }
    var arrivesWhileRead: Bool { true }

    func waitForLength() throws(AnnounceError) -> Int64 {
        throw .undecodable(path: name, reason: "a live stream has no length")
    }

    /// One decoder reads a pipe (its thread alone).
    func reopen() throws(AnnounceError) -> any ByteInput {
        throw .undecodable(path: name, reason: "a live stream is read once")
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws(AnnounceError) -> Int {
        guard offset >= keptStart else {
            throw .undecodable(path: name, reason: "a live stream cannot go back \(keptStart - offset) bytes")
        }
        var end = keptStart + Int64(kept.count)
        // Forward: read (and keep) up to what is asked for.
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while end < offset + Int64(count) {
            let want = min(chunk.count, Int(offset + Int64(count) - end))
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, want) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw .cannotOpen(path: name, reason: systemErrorMessage(errno)) }
            if got == 0 { break }  // the segment ended
            kept += chunk[..<got]
            end += Int64(got)
            if kept.count > 2 * Self.keep, offset - keptStart > Int64(Self.keep) {
                let drop = min(kept.count - Self.keep, Int(offset - keptStart))
                kept.removeFirst(drop)
                keptStart += Int64(drop)
            }
        }
        guard offset < end else { return 0 }
        let start = Int(offset - keptStart)
        let given = min(count, kept.count - start)
        kept.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + start, byteCount: given) }
        return given
    }
}
