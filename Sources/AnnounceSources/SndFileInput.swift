import AnnounceModel
import AnnounceSystem
import CSndFile

#if canImport(Glibc)
    import Glibc
#endif

/// A `ByteInput` as libsndfile's virtual I/O sees it, optionally with one 8-byte big-endian
/// field reading differently. A CAF cut short keeps its data chunk's full size, which libsndfile
/// refuses as malformed (where ffmpeg plays what is there); given the size that is there, it
/// plays that.
final class SndFileInput {
    let cursor: InputCursor
    private let patch: (offset: Int64, bytes: [UInt8])?

    /// `patchedField`: the field's offset and the value it reads as.
    init(_ input: any ByteInput, patchedField: (offset: Int, value: Int)? = nil) {
        cursor = InputCursor(input)
        patch = patchedField.map { field in
            (Int64(field.offset), (0..<8).reversed().map { UInt8(truncatingIfNeeded: field.value >> (8 * $0)) })
        }
    }

    /// Opens the input with libsndfile; the caller keeps `self` alive as long as the handle.
    func open(_ info: inout SF_INFO) -> OpaquePointer? {
        var io = Self.io  // libsndfile copies the callbacks
        return sf_open_virtual(&io, Int32(SFM_READ), &info, Unmanaged.passUnretained(self).toOpaque())
    }

    fileprivate func read(_ destination: UnsafeMutableRawPointer, _ count: Int) -> Int {
        let start = cursor.position
        let got = cursor.read(into: destination, count: count)
        guard got > 0 else { return 0 }
        // Overlay the part of the field this read covers.
        if let patch {
            for index in 0..<8 {
                let at = patch.offset + Int64(index) - start
                if at >= 0 && at < Int64(got) {
                    destination.storeBytes(of: patch.bytes[index], toByteOffset: Int(at), as: UInt8.self)
                }
            }
        }
        return got
    }

    private static let io = SF_VIRTUAL_IO(
        get_filelen: { view($0).cursor.length() ?? -1 },
        seek: { offset, whence, user in view(user).cursor.seek(offset, whence: whence) },
        read: { destination, count, user in
            guard let destination else { return 0 }
            return sf_count_t(view(user).read(destination, Int(count)))
        },
        write: { _, _, _ in 0 },
        tell: { view($0).cursor.position })
}

private func view(_ user: UnsafeMutableRawPointer?) -> SndFileInput {
    Unmanaged<SndFileInput>.fromOpaque(user!).takeUnretainedValue()
}
