import AnnounceModel
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The gain each clip plays at for a loudness target, so that a file is measured once:
/// `$XDG_CACHE_HOME/announce/loudness`, a line per clip and target, `KEY GAIN-DB`. A file's key
/// holds its device, inode, size, modification and change times, so an edited file is measured
/// again; a voice's, its engine and settings. The file is read once and written whole (a temporary file
/// renamed) after each new entry, the most recent `limit` kept. A line that does not read is
/// dropped and the file rewritten; a file that cannot be written leaves the cache in memory.
/// Each of those is one warning, never an error.
public final class LoudnessCache: Sendable {
    public let path: String?
    private let limit: Int
    private let warn: @Sendable (String) -> Void
    private struct Entries {
        var loaded = false
        var byKey: [String: (gain: Double, order: Int)] = [:]
        var next = 0
        var warnedUnwritable = false
    }
    private let entries = Mutex(Entries())

    /// `path` nil: kept in memory only.
    public init(path: String?, limit: Int = 10_000, warn: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.limit = limit
        self.warn = warn
    }

    /// The user's: `$XDG_CACHE_HOME/announce/loudness`, else `~/.cache/announce/loudness`.
    public static func user(warn: @escaping @Sendable (String) -> Void) -> LoudnessCache {
        LoudnessCache(path: CacheDirectory.userPath("loudness"), warn: warn)
    }

    /// The key of a file as it is now, at `target` LUFS; nil when it cannot be looked at.
    public static func key(of file: FileName, target: Double) -> String? {
        var info = stat()
        guard file.withCString({ stat($0, &info) }) == 0 else { return nil }
        let times = [info.st_mtim, info.st_ctim].map { "\($0.tv_sec).\($0.tv_nsec)" }
        return CacheDirectory.key(["file", "\(target)", "\(info.st_dev)", "\(info.st_ino)", "\(info.st_size)"] + times)
    }

    /// The key of what a speech engine renders with these settings, at `target` LUFS.
    public static func key(ofVoice speech: Speech, target: Double) -> String {
        CacheDirectory.key([
            "voice", "\(target)", speech.engine.rawValue, speech.voice ?? "", speech.language ?? "",
            "\(speech.speed ?? 0)"
        ])
    }

    /// The gain in dB a clip plays at, when it was measured.
    public func gain(for key: String) -> Double? {
        entries.withLock { entries in
            load(&entries)
            return entries.byKey[key]?.gain
        }
    }

    public func store(gain: Double, for key: String) {
        entries.withLock { entries in
            load(&entries)
            entries.byKey[key] = (gain, entries.next)
            entries.next += 1
            if entries.byKey.count > limit {
                let kept = entries.byKey.sorted { $0.value.order > $1.value.order }.prefix(limit)
                entries.byKey = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
            save(&entries)
        }
    }

    private func load(_ entries: inout Entries) {
        guard !entries.loaded else { return }
        entries.loaded = true
        guard let path, access(path, F_OK) == 0 else { return }
        var unreadable = 0
        let text = readWholeFile(path, limit: 4 << 20).map { String(decoding: $0, as: UTF8.self) }
        if text == nil { unreadable += 1 }
        for line in (text ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, fields[0].utf8.count == 32, let gain = Double(fields[1]), gain.isFinite else {
                unreadable += 1
                continue
            }
            entries.byKey[String(fields[0])] = (gain, entries.next)
            entries.next += 1
        }
        if unreadable > 0 {
            warn("loudness cache \(path): \(unreadable) unreadable line(s) dropped; the file is written again")
            save(&entries)
        }
    }

    private func save(_ entries: inout Entries) {
        guard let path else { return }
        let text = entries.byKey.sorted { $0.value.order < $1.value.order }.map { "\($0.key) \($0.value.gain)\n" }
            .joined()
        do throws(AnnounceError) {
            var prefix = ""
            for component in path.split(separator: "/").dropLast() {
                prefix += "/" + component
                if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                    throw .unavailable("cannot make \(prefix): \(systemErrorMessage(errno))")
                }
            }
            try writeFileAtomically(Array(text.utf8), to: path, syncDirectory: false)
        } catch {
            if !entries.warnedUnwritable {
                warn("loudness cache \(path): \(error.description); measured figures are kept in memory only")
            }
            entries.warnedUnwritable = true
        }
    }
}
