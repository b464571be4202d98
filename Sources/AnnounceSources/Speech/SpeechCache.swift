import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Rendered sentences, kept as WAV files under `$XDG_CACHE_HOME/announce/speech` and named by
/// a hash of (engine and its build, voice, speed, language, SSML, text): a repeated
/// announcement costs no render. Bounded by `limitBytes`: the least recently used go first.
/// A cache that cannot be created or written is simply not used.
public final class SpeechCache: Sendable {
    public let entries: CacheDirectory

    public init(directory: String, limitBytes: Int64 = UserConfiguration.defaultSpeechCacheBytes) {
        entries = CacheDirectory(path: directory, suffix: ".wav", limitBytes: limitBytes)
    }

    /// The user's: `$XDG_CACHE_HOME/announce/speech` (when absolute), else `~/.cache/announce/speech`.
    public static func user(limitBytes: Int64 = UserConfiguration.defaultSpeechCacheBytes) -> SpeechCache? {
        guard let path = CacheDirectory.userPath("speech") else { return nil }
        let cache = SpeechCache(directory: path, limitBytes: limitBytes)
        cache.entries.removeAbandoned()
        return cache
    }

    /// The cached render's path for a key, when there is one (and marks it used).
    func lookup(_ key: String) -> String? { entries.lookup(key) }

    /// A file to write a render into, or nil when the cache cannot be written.
    func writer(for key: String) -> CacheWriter? {
        guard entries.prepare() else { return nil }
        return CacheWriter(cache: entries, key: key)
    }

    /// Deletes every render (`announce cache clear`); returns how many were deleted.
    @discardableResult
    public func clear() -> Int { entries.clear() }

    /// The key of one sentence's render: 128 bits of FNV-1a over every input that changes it,
    /// the engine's build included (its path, size and time), so an upgraded engine renders anew.
    static func key(speech: Speech, engineBuild: String, sentence: String) -> String {
        CacheDirectory.key([
            "announce-speech-1", speech.engine.rawValue, engineBuild, speech.voice ?? "", speech.language ?? "",
            speech.speed.map(String.init) ?? "", speech.ssml == true ? "ssml" : "text", sentence
        ])
    }
}

/// One render on its way into the cache: a temporary file that becomes the entry only when
/// the render completed; dropped unfinished, it is deleted.
final class CacheWriter {
    private let cache: CacheDirectory
    private let key: String
    private let temporary: String
    private var fd: Int32
    private var dataBytes: UInt32 = 0

    fileprivate init?(cache: CacheDirectory, key: String) {
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
            guard written > 0 else {
                abandon()
                return false
            }
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
        if wrote == header.count, rename(temporary, cache.entryPath(key)) == 0 {
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
