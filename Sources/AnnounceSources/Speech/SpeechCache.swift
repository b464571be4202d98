import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

/// Rendered sentences, kept as WAV files under `$XDG_CACHE_HOME/announce/speech` and named by
/// a hash of (engine and its build, voice, speed, language, SSML, text): a repeated
/// announcement costs no render. Bounded by `limitBytes`: the least recently used go first.
/// A cache that cannot be created or written is simply not used.
public final class SpeechCache: Sendable {
    public let directory: String
    public let limitBytes: Int64
    /// Bytes in the cache as last counted plus what was added since: the directory is listed
    /// again only when this passes the limit, not after every sentence.
    private let size = Mutex<Int64?>(nil)
    /// Makes each temporary file's name unique within the daemon (two plays of one item on
    /// two devices render the same sentence at once).
    private let writers = Atomic<Int>(0)

    public init(directory: String, limitBytes: Int64 = UserConfiguration.defaultSpeechCacheBytes) {
        self.directory = directory
        self.limitBytes = limitBytes
    }

    /// The user's: `$XDG_CACHE_HOME/announce/speech` (when absolute), else `~/.cache/announce/speech`.
    public static func user(limitBytes: Int64 = UserConfiguration.defaultSpeechCacheBytes) -> SpeechCache? {
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
        let cache = SpeechCache(directory: base + "/announce/speech", limitBytes: limitBytes)
        cache.removeAbandoned()
        return cache
    }

    /// Deletes the temporary files of renders whose daemon is gone (killed mid-render).
    func removeAbandoned() {
        for name in directoryEntries(directory) where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            // `.KEY.PID.N.tmp`
            let parts = name.split(separator: ".")
            guard parts.count == 4, let pid = pid_t(parts[1]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(directory + "/" + name) }
        }
    }

    /// The cached render's path for a key, when there is one (and marks it used).
    func lookup(_ key: String) -> String? {
        guard limitBytes > 0 else { return nil }  // cache-size 0: no cache at all
        let path = directory + "/" + key + ".wav"
        guard access(path, R_OK) == 0 else { return nil }
        utimensat(AT_FDCWD, path, nil, 0)  // recently used: evicted last
        return path
    }

    /// A file to write a render into, or nil when the cache cannot be written.
    func writer(for key: String) -> CacheWriter? {
        guard limitBytes > 0, makeDirectories(directory) else { return nil }
        return CacheWriter(cache: self, key: key)
    }

    /// Renders kept, and their bytes (`announce cache`).
    public func contents() -> (entries: Int, bytes: Int64) {
        var entries = 0, bytes: Int64 = 0
        for name in directoryEntries(directory) where name.hasSuffix(".wav") {
            var info = stat()
            guard stat(directory + "/" + name, &info) == 0 else { continue }
            entries += 1
            bytes += Int64(info.st_size)
        }
        return (entries, bytes)
    }

    /// Deletes every render (`announce cache clear`), and the directory when nothing else is
    /// in it; returns how many were deleted. A render being written meanwhile is not kept.
    @discardableResult
    public func clear() -> Int {
        var deleted = 0
        for name in directoryEntries(directory) where unlink(directory + "/" + name) == 0 && name.hasSuffix(".wav") {
            deleted += 1
        }
        rmdir(directory)
        size.withLock { $0 = 0 }
        return deleted
    }

    /// A render of `bytes` became an entry: the least recently used go once over the limit.
    fileprivate func added(_ bytes: Int64) {
        let over = size.withLock { size -> Bool in
            size = size.map { $0 + bytes }
            return size.map { $0 > limitBytes } ?? true
        }
        if over { evict() }
    }

    fileprivate func temporaryName(for key: String) -> String {
        directory + "/.\(key).\(getpid()).\(writers.add(1, ordering: .relaxed).newValue).tmp"
    }

    /// Deletes the least recently used renders until the cache is within its limit.
    func evict() {
        var entries: [(path: String, size: Int64, used: Int64)] = []
        var total: Int64 = 0
        for name in directoryEntries(directory) where name.hasSuffix(".wav") {
            let path = directory + "/" + name
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            entries.append((path, Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)))
            total += Int64(info.st_size)
        }
        if total > limitBytes {
            for entry in entries.sorted(by: { $0.used < $1.used }) where total > limitBytes {
                if unlink(entry.path) == 0 { total -= entry.size }
            }
        }
        size.withLock { $0 = total }
    }

    /// The key of one sentence's render: 128 bits of FNV-1a over every input that changes it,
    /// the engine's build included (its path, size and time), so an upgraded engine renders anew.
    static func key(speech: Speech, engineBuild: String, sentence: String) -> String {
        var parts = [speech.engine.rawValue, engineBuild, speech.voice ?? "", speech.language ?? "",
                     speech.speed.map(String.init) ?? "", speech.ssml == true ? "ssml" : "text", sentence]
        parts.insert("announce-speech-1", at: 0)
        let bytes = Array(parts.joined(separator: "\u{0}").utf8)
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
            return hash
        }
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(fnv(0xcbf29ce484222325)) + hex(fnv(0x84222325cbf29ce4))
    }

    private func makeDirectories(_ path: String) -> Bool {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST { return false }
        }
        return access(path, W_OK) == 0
    }
}

/// One render on its way into the cache: a temporary file that becomes the entry only when
/// the render completed; dropped unfinished, it is deleted.
final class CacheWriter {
    private let cache: SpeechCache
    private let key: String
    private let temporary: String
    private var fd: Int32
    private var dataBytes: UInt32 = 0

    fileprivate init?(cache: SpeechCache, key: String) {
        self.cache = cache
        self.key = key
        temporary = cache.temporaryName(for: key)
        fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        if !append(WAVStreamHeader(sampleRate: 0, channels: 1, dataBytes: 0).bytes()) { return nil }
        dataBytes = 0
    }

    deinit {
        if fd >= 0 {
            close(fd)
            unlink(temporary)
        }
    }

    /// Adds data; false (and the render is not kept) when the disk refuses it.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard fd >= 0 else { return false }
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { abandon(); return false }
            offset += written
        }
        dataBytes &+= UInt32(truncatingIfNeeded: bytes.count)
        return true
    }

    private func append(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The render completed: the header gets its real sizes and the file its name.
    func commit(sampleRate: Int, channels: Int) {
        guard fd >= 0 else { return }
        let header = WAVStreamHeader(sampleRate: sampleRate, channels: channels, dataBytes: dataBytes).bytes()
        let wrote = header.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        fd = -1
        if wrote == header.count, rename(temporary, cache.directory + "/" + key + ".wav") == 0 {
            cache.added(Int64(dataBytes) + Int64(header.count))
        } else {
            unlink(temporary)
        }
    }

    private func abandon() {
        close(fd)
        fd = -1
        unlink(temporary)
    }
}
