import AnnounceModel
import CPosix
import FoundationEssentials
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The per-user directory holding the daemon's socket, lock, spool and log.
/// cron and a login shell of the same user resolve the same one.
public struct RuntimeDirectory: Sendable {
    public let path: String

    public var socketPath: String { path + "/socket" }
    /// Held (flock) by the running daemon; holds its pid.
    public var daemonLockPath: String { path + "/daemon.lock" }
    /// Held by the client that is starting a daemon, so fifty callers start one.
    public var spawnLockPath: String { path + "/spawn.lock" }
    public var spoolPath: String { path + "/spool" }
    /// The spool holds an item (`ID.json`): with no daemon running, one that died left it queued.
    public var holdsSpooledItems: Bool {
        directoryEntries(spoolPath).contains { $0.hasSuffix(".json") && ItemID(String($0.dropLast(5))).isWellFormed }
    }
    public var outcomesPath: String { path + "/outcomes" }
    /// Present while the user has the queue paused, so a restarted daemon stays paused.
    public var pausedMarkerPath: String { path + "/paused" }
    /// The manual quiet switch (`announce quiet`), JSON, so a restarted daemon keeps it.
    public var quietSettingPath: String { path + "/quiet" }
    /// Where an auto-started daemon logs.
    public var logPath: String { path + "/daemon.log" }
    /// Other applications' streams a duck lowered, and from what (DESIGN §3): restored at the next start after a crash.
    public var otherAudioJournalPath: String { path + "/ducked-others" }
    /// The MPRIS players announce keeps paused (DESIGN §3): resumed by the next daemon after a crash.
    public var pausedPlayersJournalPath: String { path + "/paused-players" }
    /// Past this size the log moves to daemon.log.1, so a daemon that runs for months keeps
    /// at most twice this on disk.
    public static let logLimitBytes = 1 << 20

    /// When the log (`LogOutput`) is this directory's daemon.log and has grown past
    /// `logLimitBytes`, the file becomes daemon.log.1 (replacing the previous one) and a new
    /// daemon.log takes over the log, stdout and stderr. A daemon logging elsewhere (a
    /// terminal, the journal) is left alone.
    @discardableResult
    public func rotateLogIfNeeded() -> Bool {
        var current = stat()
        var named = stat()
        guard fstat(LogOutput.descriptor, &current) == 0, stat(logPath, &named) == 0,
            current.st_dev == named.st_dev, current.st_ino == named.st_ino,
            current.st_size >= Self.logLimitBytes
        else { return false }
        // The new file first: when it cannot be made, the old one simply goes on.
        let fresh = logPath + ".new"
        let fd = open(fresh, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        guard rename(logPath, logPath + ".1") == 0, rename(fresh, logPath) == 0 else {
            close(fd)
            unlink(fresh)
            return false
        }
        func isOldLog(_ descriptor: Int32) -> Bool {
            var other = stat()
            return fstat(descriptor, &other) == 0 && other.st_dev == current.st_dev && other.st_ino == current.st_ino
        }
        // Stderr is moved too unless a capture has it: this never waits for a device. Then it
        // stays on daemon.log.1 (what libraries print, not log lines) until the next rotation.
        if LogOutput.descriptor != STDERR_FILENO { _ = announce_dup_cloexec(fd, LogOutput.descriptor) }
        if isOldLog(STDOUT_FILENO) { _ = dup2(fd, STDOUT_FILENO) }
        LogOutput.stderrChange.withLockIfAvailable { _ in
            if isOldLog(STDERR_FILENO) { _ = dup2(fd, STDERR_FILENO) }
        }
        close(fd)
        return true
    }

    /// `$ANNOUNCE_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/announce`, else `/tmp/announce-$UID`.
    /// cron sets no XDG_RUNTIME_DIR, so without it the user's `/run/user/$UID` (made by
    /// logind while the user is logged in or lingering) is used when it exists: a cron job
    /// and a login shell then reach the same daemon. An XDG_RUNTIME_DIR that is relative (the
    /// XDG spec's rule) or not a directory of the user's own (a stale one, or the caller's
    /// kept by `sudo -u`) is passed over; a relative ANNOUNCE_RUNTIME_DIR is refused by `prepare()`.
    public static func defaultPath(
        environment: (String) -> String? = RuntimeDirectory.processEnvironment,
        isOwnDirectory: (String) -> Bool = RuntimeDirectory.isOwnDirectory
    ) -> String {
        if let explicit = environment("ANNOUNCE_RUNTIME_DIR"), !explicit.isEmpty { return explicit }
        if let xdg = environment("XDG_RUNTIME_DIR"), xdg.hasPrefix("/"), isOwnDirectory(xdg) {
            return xdg + "/announce"
        }
        let logind = "/run/user/\(getuid())"
        if isOwnDirectory(logind) { return logind + "/announce" }
        return sharedTemporaryPath
    }

    /// The last resort, in the world-writable /tmp, where another user can take the name first.
    public static var sharedTemporaryPath: String { "/tmp/announce-\(getuid())" }

    /// Where `/tmp/announce-$UID` taken by someone else sends us: a directory in the user's
    /// home, which no other user can take (per host, for a home shared over NFS). Once made it
    /// is used from then on, so daemon and clients keep agreeing when the squatter leaves.
    public static func squatFallbackPath(environment: (String) -> String? = RuntimeDirectory.processEnvironment)
        -> String?
    {
        var home = environment("HOME") ?? ""
        if !home.hasPrefix("/"), let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            home = String(cString: directory)
        }
        guard home.hasPrefix("/") else { return nil }
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        return (home == "/" ? "" : home) + "/.cache/announce/run-" + host
    }

    public static func processEnvironment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// A directory (not a symlink) owned by this user.
    public static func isOwnDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid()
    }

    /// The user's runtime directory (`defaultPath`), created and checked. When
    /// `/tmp/announce-$UID` is taken by another user (a directory, file, FIFO or symlink
    /// not ours), falls back to `squatFallbackPath` and warns once, when it makes it.
    public static func prepare(
        environment: (String) -> String? = RuntimeDirectory.processEnvironment,
        warn: (String) -> Void = { Logger(label: "announce").warning("\($0)") }
    ) throws(AnnounceError) -> RuntimeDirectory {
        if let explicit = environment("ANNOUNCE_RUNTIME_DIR"), !explicit.isEmpty, !explicit.hasPrefix("/") {
            throw .usage("ANNOUNCE_RUNTIME_DIR must be an absolute path, not '\(explicit)'")
        }
        let path = defaultPath(environment: environment)
        guard path == sharedTemporaryPath else { return try prepare(path) }
        return try prepareShared(path, fallback: squatFallbackPath(environment: environment), warn: warn)
    }

    /// `path` in a world-writable directory, unless someone else holds the name: then
    /// `fallback`, made (with its parents) and announced by `warn` when this call makes it.
    static func prepareShared(_ path: String, fallback: String?, warn: (String) -> Void) throws(AnnounceError)
        -> RuntimeDirectory
    {
        if let fallback, isOwnDirectory(fallback) { return try prepare(fallback) }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR || info.st_uid != getuid() else {
            return try prepare(path)  // ours, or free to make
        }
        let taken =
            "\(path) is taken by \(info.st_uid == getuid() ? "a \(fileKind(info.st_mode)) of yours" : "uid \(info.st_uid)")"
        guard let fallback else {
            throw .unavailable(
                "runtime directory \(taken) and there is no home directory to fall back on; set ANNOUNCE_RUNTIME_DIR to a private directory"
            )
        }
        // The parents too (~/.cache may not exist yet): private when we make them.
        var parent = ""
        for component in fallback.split(separator: "/").dropLast() {
            parent += "/" + component
            if mkdir(parent, 0o700) != 0, errno != EEXIST {
                throw .unavailable(
                    "runtime directory \(taken); cannot create \(parent) to fall back on: \(systemErrorMessage(errno)); set ANNOUNCE_RUNTIME_DIR to a private directory"
                )
            }
        }
        let runtime = try prepare(fallback)
        warn("runtime directory \(taken); using \(fallback) instead")
        return runtime
    }

    /// Creates the directory (0700) if missing and refuses one that is not a
    /// plain directory owned by this user and closed to everyone else.
    public static func prepare(_ path: String) throws(AnnounceError) -> RuntimeDirectory {
        let fix = "set ANNOUNCE_RUNTIME_DIR to a private directory of yours"
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw .unavailable("cannot create runtime directory \(path): \(systemErrorMessage(errno)); \(fix)")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw .unavailable("cannot inspect runtime directory \(path): \(systemErrorMessage(errno)); \(fix)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .unavailable(
                "runtime directory \(path) is a \(fileKind(info.st_mode)), not a directory; refusing to use it (\(fix))"
            )
        }
        guard info.st_uid == getuid() else {
            throw .unavailable(
                "runtime directory \(path) is owned by uid \(info.st_uid), not you (uid \(getuid())); refusing to use it (\(fix))"
            )
        }
        guard info.st_mode & 0o077 == 0 else {
            throw .unavailable(
                "runtime directory \(path) is open to others (mode \(String(info.st_mode & 0o777, radix: 8))); it must be 0700 (chmod 700 \(path), or \(fix))"
            )
        }
        return RuntimeDirectory(path: path)
    }

    /// What lstat found, for a message.
    private static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFLNK: "symlink"
        case S_IFIFO: "FIFO"
        case S_IFSOCK: "socket"
        case S_IFREG: "regular file"
        case S_IFDIR: "directory"
        default: "special file"
        }
    }

    /// The saved quiet switch; nil when none was set (or the file is unreadable).
    public func loadQuietSetting() -> QuietSetting? {
        guard let bytes = readWholeFile(quietSettingPath, limit: 4096) else { return nil }
        return try? JSONCoding.decode(QuietSetting.self, from: bytes)
    }

    /// Writes the quiet switch durably (temporary file, fsync, rename).
    public func saveQuietSetting(_ setting: QuietSetting) throws(AnnounceError) {
        try writeFileAtomically(JSONCoding.encode(setting, orElse: "{}") + [UInt8(ascii: "\n")], to: quietSettingPath)
    }
}
