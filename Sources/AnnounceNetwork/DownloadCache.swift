import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Downloaded clips kept for `play --cache` (or `[download] cache = yes`) under
/// `$XDG_CACHE_HOME/announce/downloads`: `KEY.body` and its `KEY.head` (the URL, ETag,
/// Last-Modified), KEY a hash of the URL. A cached URL is asked for again with If-None-Match /
/// If-Modified-Since: a 304 plays the kept body, a 200 replaces it. The least recently used go
/// first beyond `[download] cache-size`.
public final class DownloadCache: Sendable {
    public let entries: CacheDirectory
    static let headSuffix = ".head"

    public init(path: String, limitBytes: Int64) {
        entries = CacheDirectory(path: path, suffix: ".body", limitBytes: limitBytes)
    }

    /// The user's, or nil when no home is known.
    public static func user(limitBytes: Int64) -> DownloadCache? {
        guard let path = CacheDirectory.userPath("downloads") else { return nil }
        let cache = DownloadCache(path: path, limitBytes: limitBytes)
        cache.entries.removeAbandoned()
        return cache
    }

    static func key(_ url: String) -> String { CacheDirectory.key(["announce-download-1", url]) }

    /// A kept body, open (so an eviction meanwhile cannot take it away), and its head.
    struct Entry {
        let fd: Int32
        let length: Int64
        let head: DownloadHead
    }

    /// The kept body of `url` and its head, when there is one for that very URL; its `fd` is the
    /// caller's to close.
    func lookup(_ url: String) -> Entry? {
        let key = Self.key(url)
        guard let body = entries.lookup(key), let head = DownloadHead.load(entries.path + "/" + key + Self.headSuffix),
            head.url == url, head.complete
        else { return nil }
        let fd = open(body, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, head.length == nil || head.length == Int64(info.st_size) else {
            if fd >= 0 { close(fd) }
            return nil
        }
        return Entry(fd: fd, length: Int64(info.st_size), head: head)
    }

    /// Keeps a copy of the complete body (fd `source`) with its head; a cache that
    /// cannot be written is skipped.
    func store(_ source: Int32, length: Int64, head: DownloadHead) {
        guard entries.prepare() else { return }
        let key = Self.key(head.url)
        let temporary = entries.temporaryName(for: key)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let copied = copy(from: source, to: fd, length: length)
        close(fd)
        // The old head goes first and the new one comes last: a lookup in between finds no
        // entry, never a new head on an old body or the reverse.
        let headPath = entries.path + "/" + key + Self.headSuffix
        unlink(headPath)
        guard copied, rename(temporary, entries.entryPath(key)) == 0, (try? head.save(headPath)) != nil else {
            unlink(temporary)
            return
        }
        entries.added(length, companions: [Self.headSuffix])
    }
}

/// `length` bytes of `source` from its start to `target` at its start (sendfile-free: both may be
/// any files); false on a short read or a write error.
func copy(from source: Int32, to target: Int32, length: Int64, progress: (Int64) -> Void = { _ in }) -> Bool {
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var offset: Int64 = 0
    while offset < length {
        let got = buffer.withUnsafeMutableBytes {
            pread(source, $0.baseAddress, min($0.count, Int(length - offset)), off_t(offset))
        }
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { return false }
        var done = 0
        while done < got {
            let written = buffer.withUnsafeBytes {
                pwrite(target, $0.baseAddress! + done, got - done, off_t(offset) + off_t(done))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            done += written
        }
        offset += Int64(got)
        progress(offset)
    }
    return true
}
