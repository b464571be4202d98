import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// The system queue's runtime directory and which daemon a client talks to (DESIGN §8).
extension RuntimeDirectory {
    /// The system queue's second socket, where users' own daemons connect to be its listener.
    public var listenerSocketPath: String { path + "/listener" }

    /// The listener socket of the system directory `path`.
    public static func systemListenerPath(_ path: String) -> String { RuntimeDirectory(path: path).listenerSocketPath }

    /// `$ANNOUNCE_SYSTEM_DIR`, else `/run/announce`; a relative one is a usage error (64).
    public static func systemPath(environment: (String) -> String? = RuntimeDirectory.processEnvironment)
        throws(AnnounceError) -> String
    {
        guard let explicit = environment("ANNOUNCE_SYSTEM_DIR"), !explicit.isEmpty else { return "/run/announce" }
        guard explicit.hasPrefix("/") else {
            throw .usage("ANNOUNCE_SYSTEM_DIR must be an absolute path, not '\(explicit)'")
        }
        return explicit
    }

    /// `$ANNOUNCE_SYSTEM_CONFIG`, else `/etc/announce/config`: the one config the system daemon reads.
    public static func systemConfigPath(environment: (String) -> String? = RuntimeDirectory.processEnvironment)
        throws(AnnounceError) -> String
    {
        guard let explicit = environment("ANNOUNCE_SYSTEM_CONFIG"), !explicit.isEmpty else {
            return "/etc/announce/config"
        }
        guard explicit.hasPrefix("/") else {
            throw .usage("ANNOUNCE_SYSTEM_CONFIG must be an absolute path, not '\(explicit)'")
        }
        return explicit
    }

    /// The system daemon's directory, made by root for `owner` (0755: the socket's group must
    /// reach it; what is inside is the owner's alone), through a descriptor that follows no
    /// symlink. Not root, it must already be a directory of this user's that no one else may write.
    public static func prepareSystem(_ path: String, owner: uid_t, group: gid_t) throws(AnnounceError)
        -> RuntimeDirectory
    {
        if mkdir(path, 0o755) != 0, errno != EEXIST {
            throw .unavailable("cannot create the system queue's directory \(path): \(systemErrorMessage(errno))")
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw .unavailable(
                "the system queue's directory \(path) is no directory of its own: \(systemErrorMessage(errno))")
        }
        defer { close(fd) }
        if getuid() == 0 {
            // One that someone else could write to may hold their spool entries: not taken over.
            var before = stat()
            guard fstat(fd, &before) == 0, [0, owner].contains(before.st_uid), before.st_mode & 0o022 == 0 else {
                throw .unavailable(
                    "the system queue's directory \(path) belongs to uid \(before.st_uid) or is writable by others; remove it or choose another (ANNOUNCE_SYSTEM_DIR)"
                )
            }
            guard fchown(fd, owner, group) == 0, fchmod(fd, 0o755) == 0 else {
                throw .unavailable("cannot give \(path) to uid \(owner): \(systemErrorMessage(errno))")
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == getuid() || getuid() == 0, info.st_mode & 0o022 == 0 else {
            throw .unavailable(
                "the system queue's directory \(path) must belong to the daemon's user and be writable by no one else")
        }
        return RuntimeDirectory(path: path)
    }

    /// Which daemon a client talks to: `--system` or `ANNOUNCE_SYSTEM=1` the system one, `--user`
    /// or `ANNOUNCE_SYSTEM=0` the user's own; else an explicit `ANNOUNCE_RUNTIME_DIR` means the
    /// user's, and root and system accounts (uid below 1000, or no `/run/user/UID`) use the
    /// system one when its socket exists. Everyone else: the user's own, as ever.
    public static func clientTarget(
        environment: (String) -> String? = RuntimeDirectory.processEnvironment,
        socketExists: (String) -> Bool = RuntimeDirectory.socketExists
    ) throws(AnnounceError) -> DaemonTarget {
        let system = DaemonTarget.system(try systemPath(environment: environment))
        switch environment("ANNOUNCE_SYSTEM") {
        case "1"?: return system
        case "0"?: return .user
        case let other? where !other.isEmpty:
            throw .usage("ANNOUNCE_SYSTEM must be 1 (the system queue) or 0 (your own), not '\(other)'")
        default: break
        }
        if let explicit = environment("ANNOUNCE_RUNTIME_DIR"), !explicit.isEmpty { return .user }
        let uid = getuid()
        guard uid == 0 || uid < 1000 || !isOwnDirectory("/run/user/\(uid)") else { return .user }
        // Whether it may use it is the socket's to say (77 naming the group), not a silent switch.
        guard case .system(let path) = system, socketExists(path + "/socket") else { return .user }
        return system
    }

    /// The directory a client uses for `target`: the system one as it is (a client makes
    /// nothing there), or the user's own, made and checked (`prepare`).
    public static func forClient(_ target: DaemonTarget) throws(AnnounceError) -> RuntimeDirectory {
        switch target {
        case .system(let path): RuntimeDirectory(path: path)
        case .user: try prepare()
        }
    }

    public static func socketExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }
}

/// The daemon a client talks to.
public enum DaemonTarget: Equatable, Sendable {
    /// The user's own (`RuntimeDirectory.prepare`), started when none answers.
    case user
    /// The machine's, at this directory: never started by a client; files are handed over.
    case system(String)

    public var isSystem: Bool { if case .system = self { true } else { false } }
}
