#if canImport(Glibc)
import Glibc
#endif

/// The whole file, or nil when it cannot be read.
func readWholeFile(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16384)
    while bytes.count <= limit {
        let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if got < 0 && errno == EINTR { continue }
        if got < 0 { return nil }
        if got == 0 { return bytes }
        bytes.append(contentsOf: chunk[0..<got])
    }
    return nil
}

/// Names in a directory (without `.` and `..`), or none when it cannot be read.
func directoryEntries(_ path: String) -> [String] {
    guard let handle = opendir(path) else { return [] }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}
