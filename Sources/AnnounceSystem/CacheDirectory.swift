import AnnounceModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A directory of files kept to spare work (`say`'s renders, downloads), each entry named by
/// a key and ending in `suffix`, bounded by `limitBytes`: the least recently used go first
/// (`lookup` marks one used). Entries are written under temporary names (`temporaryName`) and
/// renamed in whole. A cache that cannot be created or written is simply not used.
public final class CacheDirectory: Sendable {
    public let path: String
    public let limitBytes: Int64
    /// What every entry's file name ends in (".wav").
    public let suffix: String
    /// Bytes in the cache as last counted plus what was added since: the directory is listed
    /// again only when this passes the limit, not after every entry.
    private let size = Mutex<Int64?>(nil)
    /// Makes each temporary file's name unique within the process.
    private let writers = Atomic<Int>(0)

    public init(path: String, suffix: String, limitBytes: Int64) {
        self.path = path
        self.suffix = suffix
        self.limitBytes = limitBytes
    }

    /// `$XDG_CACHE_HOME/announce/NAME` (when absolute), else `~/.cache/announce/NAME`; nil
    /// when no home is known.
    public static func userPath(_ name: String) -> String? {
        let base: String
        if let xdg = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            base = xdg
        } else if let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") {
            base = home + "/.cache"
        } else if let entry = getpwuid(getuid()), let home = entry.pointee.pw_dir, home.pointee == UInt8(ascii: "/") {
            base = String(cString: home) + "/.cache"
        } else {
            return nil
        }
        return base + "/announce/" + name
    }

    /// The entry's path (whether or not it exists).
    public func entryPath(_ key: String) -> String { path + "/" + key + suffix }

    /// The entry's path when there is one, marked used; nil also for a limit of 0 (no cache).
    public func lookup(_ key: String) -> String? {
        guard limitBytes > 0 else { return nil }
        let entry = entryPath(key)
        guard access(entry, R_OK) == 0 else { return nil }
        utimensat(AT_FDCWD, entry, nil, 0)  // recently used: evicted last
        return entry
    }

    /// The directory exists and can be written (made when missing); false for a limit of 0.
    public func prepare() -> Bool {
        guard limitBytes > 0 else { return false }
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST { return false }
        }
        return access(path, W_OK) == 0
    }

    /// A new temporary name for an entry being written: `.KEY.PID.N.tmp`.
    public func temporaryName(for key: String) -> String {
        path + "/.\(key).\(getpid()).\(writers.add(1, ordering: .relaxed).newValue).tmp"
    }

    /// Deletes the temporary files of writers whose process is gone (killed mid-write).
    public func removeAbandoned() {
        for name in directoryEntries(path) where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            let parts = name.split(separator: ".")
            guard parts.count == 4, let pid = pid_t(parts[1]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(path + "/" + name) }
        }
    }

    /// Entries kept and their bytes (`announce cache`).
    public func contents() -> (entries: Int, bytes: Int64) {
        let entries = listed()
        return (entries.count, entries.reduce(0) { $0 + $1.size })
    }

    /// Deletes every entry and whatever else is in the directory, then the directory; returns
    /// how many entries went. One being written meanwhile is not kept.
    @discardableResult
    public func clear() -> Int {
        var deleted = 0
        for name in directoryEntries(path) where unlink(path + "/" + name) == 0 && name.hasSuffix(suffix) {
            deleted += 1
        }
        rmdir(path)
        size.withLock { $0 = 0 }
        return deleted
    }

    /// An entry of `bytes` was added: the least recently used go once over the limit (with
    /// their `companions`, as `evict`).
    public func added(_ bytes: Int64, companions: [String] = []) {
        let over = size.withLock { size -> Bool in
            size = size.map { $0 + bytes }
            return size.map { $0 > limitBytes } ?? true
        }
        if over { evict(companions: companions) }
    }

    /// Deletes the least recently used entries (and their `companions`: other files of the same
    /// key) until the cache is within its limit.
    public func evict(companions: [String] = []) {
        let entries = listed()
        var total = entries.reduce(0) { $0 + $1.size }
        if total > limitBytes {
            for entry in entries.sorted(by: { $0.used < $1.used }) where total > limitBytes {
                guard unlink(path + "/" + entry.name) == 0 else { continue }
                total -= entry.size
                let key = entry.name.dropLast(suffix.count)
                for companion in companions { unlink(path + "/" + key + companion) }
            }
        }
        size.withLock { $0 = total }
    }

    private func listed() -> [(name: String, size: Int64, used: Int64)] {
        directoryEntries(path).compactMap { name in
            guard name.hasSuffix(suffix), !name.hasPrefix(".") else { return nil }
            var info = stat()
            guard stat(path + "/" + name, &info) == 0 else { return nil }
            return (name, Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
        }
    }

    /// 128 bits of FNV-1a over `parts` (joined by NUL), as 32 hex digits: an entry's key.
    public static func key(_ parts: [String]) -> String {
        let bytes = Array(parts.joined(separator: "\u{0}").utf8)
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(fnv(0xcbf2_9ce4_8422_2325)) + hex(fnv(0x8422_2325_cbf2_9ce4))
    }
}
