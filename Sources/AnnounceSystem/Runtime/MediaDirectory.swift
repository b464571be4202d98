import AnnounceModel
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// `RUNTIME/media`: audio the queue owns (`announce play -`, URLs). The client streams stdin
/// into a file here before it asks the daemon (`store`); the daemon downloads a URL item's body
/// here (`ProgressiveDownload`); the daemon deletes the files once the item has its outcome, and at start every file no spooled item names (`sweep`). A client holds
/// an flock on its file from creation until the daemon has acknowledged the item, so a
/// daemon starting meanwhile leaves it alone.
public struct MediaDirectory: Sendable {
    public let path: String

    public init(runtime: RuntimeDirectory) {
        path = runtime.path + "/media"
    }

    /// The most bytes one media file may have: `Limits.maxMediaBytes`; a debug build takes
    /// `ANNOUNCE_TEST_MEDIA_LIMIT` (bytes) instead, so the tests need not pipe or serve 256 MiB.
    public static var limit: Int {
        #if DEBUG
            if let limit = getenv("ANNOUNCE_TEST_MEDIA_LIMIT").flatMap({ Int(String(cString: $0)) }) { return limit }
        #endif
        return Limits.maxMediaBytes
    }

    /// The file holding media `name` (a `Clip.isValidMediaName`).
    public func filePath(_ name: String) -> String { path + "/" + name }

    /// Makes the directory (0700) when missing.
    public func create() throws(AnnounceError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .unavailable("cannot create \(path): \(systemErrorMessage(errno))")
        }
    }

    /// Streams `fd` to its end into a new file (`begin`), in chunks. Errors name the input as
    /// `label`: more than `limit` bytes or none at all (65), a read error (66), a write error
    /// such as a full disk (69); nothing is left behind by any of them.
    public func store(from fd: Int32, label: String, limit: Int) throws(AnnounceError) -> MediaFile {
        let writer = try begin(
            label: label, limit: limit, overLimit: "the most announce takes from stdin; play a file instead")
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let got = read(fd, chunk.baseAddress, chunk.count)
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw .cannotOpen(path: label, reason: systemErrorMessage(errno)) }
            if got == 0 { break }
            try writer.append(UnsafeRawBufferPointer(rebasing: chunk[..<got]))
        }
        return try writer.finish()
    }

    /// A copy of the regular file open at `fd` (a descriptor a system-queue client handed over,
    /// DESIGN §8), read from its start with pread, so the client's own offset stays as it was:
    /// anything but a regular file is refused (66), and so is one past `limit` (65). Errors name
    /// it as `label`, the path the client gave.
    public func store(copyOf fd: Int32, label: String, limit: Int) throws(AnnounceError) -> MediaFile {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .cannotOpen(path: label, reason: systemErrorMessage(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .cannotOpen(
                path: label, reason: "not a regular file (the system queue takes files, and pipes the client read)")
        }
        // Only local storage or memory: a kernel's files (/proc, /sys) are no audio, and a network
        // or FUSE file could stall the daemon's one control thread (the client reads those first).
        guard Self.isLocal(fd) else {
            throw .cannotOpen(
                path: label, reason: "a file of /proc, /sys, FUSE or the network (the client reads those itself)")
        }
        let writer = try begin(label: label, limit: limit, overLimit: "the most the system queue takes of one file")
        if info.st_size > limit { throw writer.tooLarge }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        var offset: off_t = 0
        while true {
            let got = pread(fd, chunk.baseAddress, chunk.count, offset)
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw .cannotOpen(path: label, reason: systemErrorMessage(errno)) }
            if got == 0 { break }
            try writer.append(UnsafeRawBufferPointer(rebasing: chunk[..<got]))
            offset += off_t(got)
        }
        return try writer.finish()
    }

    /// The statfs magics of local storage and memory, the only files the system queue copies:
    /// ext2/3/4, XFS, Btrfs, tmpfs (memfd too), F2FS, FAT, exFAT, NTFS (ntfs-3g is FUSE), ISO 9660,
    /// UDF, SquashFS, EROFS, overlayfs, ZFS, JFS, ReiserFS, HFS+, bcachefs, NILFS, ramfs.
    public static let localFilesystems: Set<Int64> = [
        0xef53, 0x5846_5342, 0x9123_683e, 0x0102_1994, 0xf2f5_2010, 0x4d44, 0x2011_bab0, 0x7366_746e, 0x9660,
        0x1501_3346, 0x7371_7368, 0xe0f5_e1e2, 0x794c_7630, 0x2fc1_2fc1, 0x3153_464a, 0x5265_4973, 0x482b,
        0xca45_1a4e, 0x3434, 0x8584_58f6
    ]

    /// The file open at `fd` is on local storage or in memory (`localFilesystems`).
    public static func isLocal(_ fd: Int32) -> Bool {
        let magic = announce_filesystem_type(fd)
        return magic >= 0 && localFilesystems.contains(Int64(magic))
    }

    /// A new media file being written under a temporary name (`MediaWriter`), locked from now on.
    /// `overLimit` ends the message for more than `limit` bytes ("more than 256 MiB, OVERLIMIT").
    public func begin(label: String, limit: Int, overLimit: String) throws(AnnounceError) -> MediaWriter {
        try create()
        let name = Self.newName()
        let temporary = path + "/." + name + ".tmp"
        return MediaWriter(
            directory: self, name: name, temporary: temporary, descriptor: try Self.createLocked(temporary),
            label: label, limit: limit, overLimit: overLimit)
    }

    /// Where a URL item's download keeps what resuming it needs, beside its body `name`.
    public func headPath(_ name: String) -> String { filePath(Self.headName(name)) }

    /// The files of media `name`: its body, and a download's head.
    public static func files(of name: String) -> [String] { [name, headName(name)] }

    /// The media `clip` owns here: its audio, and the chimes a zone message carried.
    public func names(ownedBy clip: Clip) -> [String] {
        let prefix = path + "/"
        return [clip.media].compactMap { $0 }
            + [clip.chime, clip.chimeAfter].compactMap { chime in
                chime.flatMap { $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : nil }
            }
    }

    static func headName(_ name: String) -> String { name + ".head" }

    /// Deletes media `name` (and a download's head); a missing file is no error.
    public func remove(_ name: String) {
        guard Clip.isValidMediaName(name) else { return }
        for file in Self.files(of: name) { unlink(filePath(file)) }
    }

    /// Deletes every file but those named in `keeping` and those a client still holds (being
    /// written, or waiting for its acknowledgement); returns how many went.
    @discardableResult
    public func sweep(keeping: Set<String>) -> Int {
        var removed = 0
        for name in directoryEntries(path) where !keeping.contains(name) {
            let file = filePath(name)
            let fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            if fd < 0 {
                if errno == ELOOP || errno == ENXIO, unlink(file) == 0 { removed += 1 }  // not ours to keep
                continue
            }
            // Unlinked while locked: a client that locks it afterwards sees it gone (`createLocked`).
            if flock(fd, LOCK_EX | LOCK_NB) == 0, unlink(file) == 0 { removed += 1 }
            close(fd)
        }
        return removed
    }

    /// A new file at `temporary`, flocked, and still linked once the lock is held (a sweep
    /// may have deleted it in between: then another is made).
    static func createLocked(_ temporary: String) throws(AnnounceError) -> Int32 {
        while true {
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .unavailable("cannot create \(temporary): \(systemErrorMessage(errno))") }
            var info = stat()
            if flock(fd, LOCK_EX) == 0, fstat(fd, &info) == 0, info.st_nlink > 0 { return fd }
            close(fd)
        }
    }

    /// 32 random hex digits (getrandom): names never collide, so no client waits on another.
    public static func newName() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

/// A stored media file and the client's lock on it, until `release` (the daemon owns it now,
/// or may: keep it) or `discard` (refused: delete it).
public final class MediaFile {
    public let name: String
    public let path: String
    private var descriptor: Int32

    init(name: String, path: String, descriptor: Int32) {
        self.name = name
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Drops the lock and keeps the file.
    public func release() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// Deletes the file (while still locked, so no sweep races it), then drops the lock.
    public func discard() {
        if descriptor >= 0 { unlink(path) }
        release()
    }
}
