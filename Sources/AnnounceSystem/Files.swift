import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// The file's first `limit` bytes (all of it when shorter), or nil when it cannot be read.
/// O_NONBLOCK so that a FIFO put where a file was expected cannot hang the reader.
package func readFilePrefix(_ path: String, limit: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: min(max(0, limit), 16384))
    while bytes.count < limit {
        let wanted = min(chunk.count, limit - bytes.count)
        let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, wanted) }
        if got < 0 && errno == EINTR { continue }
        if got < 0 { return nil }
        if got == 0 { break }
        bytes.append(contentsOf: chunk[0..<got])
    }
    return bytes
}

/// The whole file, or nil when it cannot be read or is longer than `limit`.
package func readWholeFile(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
    guard let bytes = readFilePrefix(path, limit: limit + 1), bytes.count <= limit else { return nil }
    return bytes
}

/// Names in a directory (without `.` and `..`), or none when it cannot be read.
package func directoryEntries(_ path: String) -> [String] {
    guard let handle = opendir(path) else { return [] }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Replaces `path` with `bytes` durably: a temporary file beside it, fsync, rename; then
/// fsync of the directory holding `path` (`directoryFD` when the caller keeps it open),
/// unless `syncDirectory` is false (the caller syncs it later, once for several files).
package func writeFileAtomically(
    _ bytes: [UInt8], to path: String, directoryFD: Int32? = nil,
    syncDirectory: Bool = true
) throws(AnnounceError) {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[..<$0]) } ?? "."
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    let temporary = directory + "/." + name + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .unavailable("cannot write \(temporary): \(systemErrorMessage(errno))") }
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd)
            unlink(temporary)
            throw .unavailable("cannot write \(temporary): \(systemErrorMessage(code))")
        }
        offset += written
    }
    let synced = fsync(fd) == 0
    let code = errno
    close(fd)
    guard synced, rename(temporary, path) == 0 else {
        let failure = synced ? errno : code
        unlink(temporary)
        throw .unavailable("cannot store \(path): \(systemErrorMessage(failure))")
    }
    // The rename is durable only once the directory is: the caller's open one, else the parent.
    if !syncDirectory { return }
    if let directoryFD {
        fsync(directoryFD)
    } else {
        let parent = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if parent >= 0 {
            fsync(parent)
            close(parent)
        }
    }
}

/// Identity and version of a file: a changed stamp means it was replaced or rewritten (the
/// change time catches a rewrite that kept the size and set the old mtime back).
public struct FileStamp: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: (seconds: Int, nanoseconds: Int)
    var changed: (seconds: Int, nanoseconds: Int)

    /// nil when there is no such file.
    public init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = (Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec))
        changed = (Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec))
    }

    public static func == (a: FileStamp, b: FileStamp) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified == b.modified && a.changed == b.changed
    }
}
