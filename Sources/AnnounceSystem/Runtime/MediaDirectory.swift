#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel

/// `RUNTIME/media`: audio the queue owns (`announce play -`). The client streams stdin into a
/// file here before it asks the daemon (`store`); the daemon deletes the file once the item
/// has its outcome, and at start every file no spooled item names (`sweep`). A client holds
/// an flock on its file from creation until the daemon has acknowledged the item, so a
/// daemon starting meanwhile leaves it alone.
public struct MediaDirectory: Sendable {
    public let path: String

    public init(runtime: RuntimeDirectory) {
        path = runtime.path + "/media"
    }

    /// The file holding media `name` (a `Clip.isValidMediaName`).
    public func filePath(_ name: String) -> String { path + "/" + name }

    /// Makes the directory (0700) when missing.
    public func create() throws(AnnounceError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .unavailable("cannot create \(path): \(systemErrorMessage(errno))")
        }
    }

    /// Streams `fd` to its end into a new file, in chunks: a temporary name, fsync, rename,
    /// fsync of the directory. Errors name the input as `label`: more than `limit` bytes or
    /// none at all (65), a read error (66), a write error such as a full disk (69); nothing
    /// is left behind by any of them.
    public func store(from fd: Int32, label: String, limit: Int) throws(AnnounceError) -> MediaFile {
        try create()
        let name = Self.newName()
        let temporary = path + "/." + name + ".tmp"
        let file = try Self.createLocked(temporary)
        var stored = false
        defer {
            if !stored {
                unlink(temporary)
                close(file)
            }
        }
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw .cannotOpen(path: label, reason: systemErrorMessage(errno)) }
            if got == 0 { break }
            total += got
            if total > limit {
                let most = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
                throw .undecodable(path: label, reason: "more than \(most), the most announce takes from stdin; play a file instead")
            }
            try writeAll(file, chunk[..<got], label: label)
        }
        guard total > 0 else { throw .undecodable(path: label, reason: "empty") }
        guard fsync(file) == 0, rename(temporary, filePath(name)) == 0 else {
            throw .unavailable("\(label): cannot store it in \(path): \(systemErrorMessage(errno))")
        }
        stored = true
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 { fsync(directory); close(directory) }
        return MediaFile(name: name, path: filePath(name), descriptor: file)
    }

    /// Deletes media `name`; a missing file is no error.
    public func remove(_ name: String) {
        guard Clip.isValidMediaName(name) else { return }
        unlink(filePath(name))
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
    private static func createLocked(_ temporary: String) throws(AnnounceError) -> Int32 {
        while true {
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .unavailable("cannot create \(temporary): \(systemErrorMessage(errno))") }
            var info = stat()
            if flock(fd, LOCK_EX) == 0, fstat(fd, &info) == 0, info.st_nlink > 0 { return fd }
            close(fd)
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>, label: String) throws(AnnounceError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written < 0 { throw .unavailable("\(label): cannot store it in \(path): \(systemErrorMessage(errno))") }
            offset += written
        }
    }

    /// 32 random hex digits (getrandom): names never collide, so no client waits on another.
    private static func newName() -> String {
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
