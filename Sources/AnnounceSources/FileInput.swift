import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A local file as a decoder's bytes: an open descriptor read with pread. Its length is the
/// file's size each time it is asked, as the libraries' own file I/O has it.
public final class FileInput: ByteInput {
    public let file: FileName
    public var name: String { file.text }
    public var arrivesWhileRead: Bool { false }
    private let fd: Int32

    /// Opens `file` by its name's bytes (which need not be UTF-8); refuses what is not a
    /// regular file with the reason a user can act on (66).
    public init(_ file: FileName) throws(AnnounceError) {
        self.file = file
        fd = try Self.openReadable(file)
    }

    public convenience init(path: String) throws(AnnounceError) {
        try self.init(FileName(path))
    }

    private init(file: FileName, fd: Int32) {
        self.file = file
        self.fd = fd
    }

    deinit { close(fd) }

    public var length: Int64? {
        var status = stat()
        return fstat(fd, &status) == 0 ? Int64(status.st_size) : nil
    }

    public func waitForLength() throws(AnnounceError) -> Int64 {
        guard let length else { throw .cannotOpen(path: name, reason: systemErrorMessage(errno)) }
        return length
    }

    public func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws(AnnounceError) -> Int {
        var done = 0
        while done < count {
            let got = pread(fd, buffer + done, count - done, off_t(offset) + off_t(done))
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .cannotOpen(path: name, reason: systemErrorMessage(errno)) }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// The same open file on a descriptor of its own: the same bytes even if the name is
    /// removed or reused meanwhile.
    public func reopen() throws(AnnounceError) -> any ByteInput {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .cannotOpen(path: name, reason: systemErrorMessage(errno)) }
        return FileInput(file: file, fd: copy)
    }

    /// An fd for reading, or the reason a user can act on.
    private static func openReadable(_ file: FileName) throws(AnnounceError) -> Int32 {
        let path = file.text
        // Non-blocking, so a FIFO or a device node cannot hang the open; refused below.
        let fd = file.withCString { Glibc.open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else {
            let code = errno
            throw .cannotOpen(path: path, reason: code == ENOENT ? "no such file" : systemErrorMessage(code))
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw .cannotOpen(path: path, reason: systemErrorMessage(code))
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return fd
        case S_IFDIR:
            close(fd)
            throw .cannotOpen(path: path, reason: "is a directory")
        default:
            close(fd)
            throw .cannotOpen(path: path, reason: "not a regular file")
        }
    }
}
