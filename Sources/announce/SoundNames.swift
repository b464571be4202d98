import AnnounceClient
import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play chime`, `announce alert attention`: a file argument that is no file here and
/// has no slash names an installed sound. The first directory that has it wins:
/// `$XDG_DATA_HOME/announce/sounds` (else `~/.local/share/announce/sounds`), then the running
/// binary's own `PREFIX/share/announce/sounds` (where `make install` puts them), then
/// `announce/sounds` under each of `$XDG_DATA_DIRS` (else `/usr/local/share:/usr/share`).
/// A name matches the file of that name, or that name with any extension (`chime` → `chime.flac`).
enum SoundNames {
    /// A file argument by its bytes: a name that is not UTF-8 is a file's, never a sound's.
    static func resolve(_ argument: FileName) -> FileName {
        argument.isUTF8 ? FileName(resolve(argument.text)) : argument
    }

    static func resolve(_ argument: String) -> String {
        guard !argument.isEmpty, !argument.contains("/"), access(argument, F_OK) != 0 else { return argument }
        for directory in directories() {
            if let found = match(argument, in: directory) { return found }
        }
        return argument
    }

    static func directories() -> [String] {
        let environment = { (name: String) in
            getenv(name).map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil }
        }
        var result: [String] = []
        if let data = environment("XDG_DATA_HOME") {
            result.append(data + "/announce/sounds")
        } else if let home = environment("HOME") {
            result.append(home + "/.local/share/announce/sounds")
        }
        if let prefix = installPrefix() { result.append(prefix + "/share/announce/sounds") }
        let shared =
            getenv("XDG_DATA_DIRS").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? "/usr/local/share:/usr/share"
        for directory in shared.split(separator: ":") where directory.hasPrefix("/") {
            result.append(directory + "/announce/sounds")
        }
        var seen: Set<String> = []
        return result.filter { seen.insert($0).inserted }
    }

    /// `PREFIX` of `PREFIX/bin/announce`, the binary running now.
    private static func installPrefix() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == "bin" else { return nil }
        return parts.dropLast(2).joined(separator: "/")
    }

    /// `directory/name`, else the first `directory/name.EXT` in name order.
    private static func match(_ name: String, in directory: String) -> String? {
        let exact = directory + "/" + name
        if isRegularFile(exact) { return exact }
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var candidates: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if entryName.hasPrefix(name + "."), !entryName.dropFirst(name.count + 1).contains("."),
                isRegularFile(directory + "/" + entryName)
            {
                candidates.append(directory + "/" + entryName)
            }
        }
        return candidates.sorted().first
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}
