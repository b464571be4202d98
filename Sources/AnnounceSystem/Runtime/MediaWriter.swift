import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// A media file being written (`MediaDirectory.begin`): chunks appended under a temporary
/// name, then `finish` (fsync, rename, fsync of the directory) makes it the `MediaFile`.
/// Dropped unfinished, or after any error, it deletes the temporary file: a failed input
/// leaves nothing behind.
public final class MediaWriter {
    /// What messages call the input (stdin).
    public let label: String
    /// Bytes appended so far.
    public private(set) var count = 0
    /// Most bytes the input may have.
    public let limit: Int
    private let directory: MediaDirectory
    private let name: String
    private let temporary: String
    private let overLimit: String
    private var descriptor: Int32

    init(
        directory: MediaDirectory, name: String, temporary: String, descriptor: Int32, label: String, limit: Int,
        overLimit: String
    ) {
        self.directory = directory
        self.name = name
        self.temporary = temporary
        self.descriptor = descriptor
        self.label = label
        self.limit = limit
        self.overLimit = overLimit
    }

    deinit { abandon() }

    /// The error for an input of more than `limit` bytes (65), also for one known to be too
    /// large before it is read (a Content-Length).
    public var tooLarge: AnnounceError {
        let most = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        return .undecodable(path: label, reason: "more than \(most), \(overLimit)")
    }

    /// Writes `bytes` at the end; past `limit` in all, `tooLarge`; a write error (a full disk) is 69.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(AnnounceError) {
        guard descriptor >= 0 else { throw .internal("\(label): media written after it was finished") }
        count += bytes.count
        if count > limit { throw tooLarge }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written < 0 { throw storeFailure(errno) }
            offset += written
        }
    }

    /// The whole input, durable under its own name and still locked; none at all is 65.
    public func finish() throws(AnnounceError) -> MediaFile {
        guard count > 0 else { throw .undecodable(path: label, reason: "empty") }
        guard fsync(descriptor) == 0, rename(temporary, directory.filePath(name)) == 0 else {
            throw storeFailure(errno)
        }
        let file = MediaFile(name: name, path: directory.filePath(name), descriptor: descriptor)
        descriptor = -1
        let handle = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if handle >= 0 {
            fsync(handle)
            close(handle)
        }
        return file
    }

    /// Deletes the temporary file (while locked, so no sweep races it) unless finished.
    public func abandon() {
        guard descriptor >= 0 else { return }
        unlink(temporary)
        close(descriptor)
        descriptor = -1
    }

    private func storeFailure(_ code: Int32) -> AnnounceError {
        .unavailable("\(label): cannot store it in \(directory.path): \(systemErrorMessage(code))")
    }
}
