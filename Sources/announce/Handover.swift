import AnnounceModel
import AnnounceSources
import AnnounceSystem
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The files a client of the system queue hands over (DESIGN §8): each opened here, with the
/// caller's own rights, and sent as a descriptor beside the request; the daemon copies it and
/// never opens the caller's path. A pipe or a device is read here first into a memory file
/// (the daemon takes regular files only). Closed when this goes.
final class FileHandover {
    private(set) var descriptors: [Int32] = []

    deinit { for fd in descriptors { close(fd) } }

    /// Opens `file` (named `label` in errors) and adds it; returns its index and the name the
    /// checks open it by (`/proc/self/fd/N`: the very file that is handed, not the path again).
    func add(_ file: FileName, label: String) throws(AnnounceError) -> (index: Int, checked: FileName) {
        let fd = file.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else {
            throw .cannotOpen(path: label, reason: errno == ENOENT ? "no such file" : systemErrorMessage(errno))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw .cannotOpen(path: label, reason: systemErrorMessage(errno))
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            close(fd)
            throw .cannotOpen(path: label, reason: "is a directory")
        case S_IFREG where MediaDirectory.isLocal(fd):
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return adopt(fd)
        default:
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            defer { close(fd) }
            return adopt(try Self.memoryCopy(of: fd, label: label))
        }
    }

    /// Everything `fd` gives (stdin, a pipe) in a memory file, added; at most the media limit (65).
    func addContents(of fd: Int32, label: String) throws(AnnounceError) -> (index: Int, checked: FileName) {
        adopt(try Self.memoryCopy(of: fd, label: label))
    }

    /// Each request's chimes, opened and added (`clip.handed`); the paths stay as their labels.
    func addChimes(_ requests: inout [ItemRequest]) throws(AnnounceError) {
        for index in requests.indices {
            var clip = requests[index].clip
            if let chime = clip.chime {
                clip.handed = clip.handed ?? HandedFiles()
                clip.handed?.chime = try add(FileName(chime), label: "--chime \(chime)").index
            }
            if let after = clip.chimeAfter {
                clip.handed = clip.handed ?? HandedFiles()
                clip.handed?.chimeAfter = try add(FileName(after), label: "--chime-after \(after)").index
            }
            requests[index].clip = clip
        }
    }

    private func adopt(_ fd: Int32) -> (index: Int, checked: FileName) {
        descriptors.append(fd)
        return (descriptors.count - 1, FileName("/proc/self/fd/\(fd)"))
    }

    private static func memoryCopy(of fd: Int32, label: String) throws(AnnounceError) -> Int32 {
        let memory = announce_memory_file("announce-handed")
        guard memory >= 0 else { throw .internal("memfd_create: \(systemErrorMessage(-memory))") }
        let limit = MediaDirectory.limit
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 {
                close(memory)
                throw .cannotOpen(path: label, reason: systemErrorMessage(errno))
            }
            if got == 0 { break }
            total += got
            if total > limit {
                close(memory)
                throw .undecodable(
                    path: label, reason: "more than \(limit >> 20) MiB, the most the system queue takes of a pipe")
            }
            var offset = 0
            while offset < got {
                let written = chunk.withUnsafeBytes { write(memory, $0.baseAddress! + offset, got - offset) }
                if written < 0 && errno == EINTR { continue }
                if written < 0 {
                    close(memory)
                    throw .unavailable("\(label): cannot keep it in memory: \(systemErrorMessage(errno))")
                }
                offset += written
            }
        }
        guard total > 0 else {
            close(memory)
            throw .undecodable(path: label, reason: "empty")
        }
        lseek(memory, 0, SEEK_SET)
        return memory
    }
}
