import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The bytes a decoder reads, as SFBAudioEngine's InputSource: a local file (`FileInput`) or a
/// download still arriving (`GrowingInput`). Reads are positioned, so one input serves readers
/// on several threads; each decoder keeps its own cursor (`InputCursor`).
public protocol ByteInput: AnyObject, Sendable {
    /// What messages call it: a file's path, a URL.
    var name: String { get }
    /// Its length in bytes when known now; nil while it arrives without a known length.
    var length: Int64? { get }
    /// Its bytes may still be arriving while it is read (even once they all have: a play of it
    /// then decodes the same whatever the timing). Reading its end at open would wait for all
    /// of it, so decoders that need not, do not.
    var arrivesWhileRead: Bool { get }
    /// Blocks until the length is known (for a download of unknown length: until it is
    /// complete) and returns it.
    func waitForLength() throws(AnnounceError) -> Int64
    /// Reads `count` bytes from `offset` into `buffer`, waiting for any still arriving; fewer
    /// only at the end of the input (0 at or past it). Throws what keeps them from coming.
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws(AnnounceError) -> Int
    /// An independent reader of the same bytes (`LengthCount` counts on one of its own).
    func reopen() throws(AnnounceError) -> any ByteInput
}

extension ByteInput {
    /// Up to `count` bytes from `offset` (fewer at the end).
    func bytes(at offset: Int64, count: Int) throws(AnnounceError) -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, count), alignment: 1)
        defer { buffer.deallocate() }
        let got = try read(into: buffer.baseAddress!, count: count, at: offset)
        return Array(buffer.prefix(got))
    }

    /// The length, waiting for it when it is not known yet.
    func settledLength() throws(AnnounceError) -> Int64 {
        if let length { return length }
        return try waitForLength()
    }
}

/// A decoder's position in its input, for the C libraries' read and seek callbacks. A failure
/// of the input cannot pass through C: it is kept here, the library sees an I/O error, and the
/// decoder throws it once the library call returns (`check`).
final class InputCursor {
    let input: any ByteInput
    private(set) var position: Int64 = 0
    private(set) var failure: AnnounceError?
    /// A read came back short since the last seek: the input ended there (stdio's `feof`).
    private(set) var hitEnd = false

    /// Bytes read ahead of small reads: libmpg123 asks for each frame's few hundred bytes, a
    /// pread each (275,000 for an hour of MP3). Only of inputs that are all there: one still
    /// arriving would make a small read wait for a whole read-ahead.
    private let ahead: UnsafeMutableRawBufferPointer?
    private var aheadStart: Int64 = 0
    private var aheadCount = 0
    static let readAhead = 64 * 1024

    init(_ input: any ByteInput) {
        self.input = input
        ahead = input.arrivesWhileRead ? nil : .allocate(byteCount: Self.readAhead, alignment: 16)
    }

    deinit { ahead?.deallocate() }

    /// Reads at the position and moves past what was read; -1 when the input failed.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        do {
            let got = try readAhead(into: buffer, count: count)
            position += Int64(got)
            hitEnd = got < count
            return got
        } catch {
            failure = failure ?? error
            return -1
        }
    }

    private func readAhead(into buffer: UnsafeMutableRawPointer, count: Int) throws(AnnounceError) -> Int {
        guard let ahead, count < Self.readAhead / 2 else {
            return try input.read(into: buffer, count: count, at: position)
        }
        var copied = 0
        while copied < count {
            let offset = position + Int64(copied) - aheadStart
            if offset >= 0 && offset < Int64(aheadCount) {
                let n = min(count - copied, aheadCount - Int(offset))
                (buffer + copied).copyMemory(from: ahead.baseAddress! + Int(offset), byteCount: n)
                copied += n
                continue
            }
            aheadStart = position + Int64(copied)
            aheadCount = 0
            aheadCount = try input.read(into: ahead.baseAddress!, count: Self.readAhead, at: aheadStart)
            if aheadCount == 0 { break }
        }
        return copied
    }

    /// `lseek(2)`: the new position, or -1 (a negative position, or the end cannot be known).
    func seek(_ offset: Int64, whence: Int32) -> Int64 {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END:
            guard let length = self.length() else { return -1 }
            base = length
        default: return -1
        }
        guard base + offset >= 0 else { return -1 }
        position = base + offset
        hitEnd = false
        return position
    }

    /// The input's length, waiting for it if need be; nil when the input failed.
    func length() -> Int64? {
        do {
            return try input.settledLength()
        } catch {
            failure = failure ?? error
            return nil
        }
    }

    /// Throws the input's failure, when a library call met one.
    func check() throws(AnnounceError) {
        if let failure { throw failure }
    }
}
