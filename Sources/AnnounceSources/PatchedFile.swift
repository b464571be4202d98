import CSndFile
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

/// A file as libsndfile's virtual I/O sees it, with one 8-byte big-endian field reading
/// differently. A CAF cut short keeps its data chunk's full size, which libsndfile refuses as
/// malformed (where ffmpeg plays what is there); given the size that is there, it plays that.
final class PatchedFile {
    private let fd: Int32
    private let length: Int64
    private let fieldOffset: Int64
    private let field: [UInt8]
    private var position: Int64 = 0

    /// Takes ownership of `fd`.
    init(fd: Int32, length: Int64, fieldOffset: Int, value: Int) {
        self.fd = fd
        self.length = length
        self.fieldOffset = Int64(fieldOffset)
        field = (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    deinit { close(fd) }

    /// Opens the view with libsndfile; the caller keeps `self` alive as long as the handle.
    func open(_ info: inout SF_INFO) -> OpaquePointer? {
        var io = Self.io  // libsndfile copies the callbacks
        return sf_open_virtual(&io, Int32(SFM_READ), &info, Unmanaged.passUnretained(self).toOpaque())
    }

    fileprivate func read(_ destination: UnsafeMutableRawPointer, _ count: Int) -> Int {
        let got = pread(fd, destination, count, off_t(position))
        guard got > 0 else { return 0 }
        // Overlay the part of the field this read covers.
        for index in 0..<8 {
            let at = fieldOffset + Int64(index) - position
            if at >= 0 && at < Int64(got) { destination.storeBytes(of: field[index], toByteOffset: Int(at), as: UInt8.self) }
        }
        position += Int64(got)
        return got
    }

    fileprivate func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        switch whence {
        case SEEK_SET: position = offset
        case SEEK_CUR: position += offset
        default: position = length + offset
        }
        return position
    }

    private static let io = SF_VIRTUAL_IO(
        get_filelen: { patched($0).length },
        seek: { offset, whence, user in patched(user).seek(offset, whence) },
        read: { destination, count, user in
            guard let destination else { return 0 }
            return sf_count_t(patched(user).read(destination, Int(count)))
        },
        write: { _, _, _ in 0 },
        tell: { patched($0).position })
}

private func patched(_ user: UnsafeMutableRawPointer?) -> PatchedFile {
    Unmanaged<PatchedFile>.fromOpaque(user!).takeUnretainedValue()
}
