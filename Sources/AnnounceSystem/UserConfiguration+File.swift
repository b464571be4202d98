import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// Finding and reading the config file; `UserConfiguration.parse` is the pure part.
extension UserConfiguration {
    /// `$XDG_CONFIG_HOME/announce/config` (when set, non-empty and absolute, as the XDG spec asks),
    /// else `$HOME/.config/announce/config`, else the passwd entry's home; nil without any home.
    public static func defaultPath(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } })
        -> String?
    {
        if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/announce/config" }
        if let home = environment("HOME"), home.hasPrefix("/") { return home + "/.config/announce/config" }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            let home = String(cString: directory)
            if home.hasPrefix("/") { return home + "/.config/announce/config" }
        }
        return nil
    }

    /// Reads and parses the file at `path`; a missing file gives the defaults and no warning.
    public static func load(path: String? = defaultPath()) -> (configuration: UserConfiguration, warnings: [String]) {
        guard let path else { return (UserConfiguration(), []) }
        switch text(at: path) {
        case .success(nil): return (UserConfiguration(), [])
        case .success(let text?): return parse(text, name: path)
        case .failure(let problem): return (UserConfiguration(), ["\(path): \(problem.reason); using the defaults"])
        }
    }

    /// For a running daemon reading the file again: as `load`, except that a file that is there
    /// but cannot be used (no permission, a directory, too large) gives no configuration, so
    /// that what was read before stays in force.
    public static func reload(path: String) -> (configuration: UserConfiguration?, warnings: [String]) {
        switch text(at: path) {
        case .success(nil): return (UserConfiguration(), [])
        case .success(let text?): return parse(text, name: path)
        case .failure(let problem): return (nil, ["\(path): \(problem.reason); keeping the settings read before"])
        }
    }

    private struct Unusable: Error { let reason: String }

    /// The file's text; nil when there is no file.
    private static func text(at path: String) -> Result<String?, Unusable> {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return .success(nil) }
            return .failure(Unusable(reason: "cannot read: \(systemErrorMessage(errno))"))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(Unusable(reason: "not a regular file")) }
        guard info.st_size <= 1 << 20 else { return .failure(Unusable(reason: "larger than 1 MiB")) }
        guard let bytes = readWholeFile(path, limit: 1 << 20) else {
            return .failure(Unusable(reason: "cannot read: \(systemErrorMessage(errno))"))
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }
}
