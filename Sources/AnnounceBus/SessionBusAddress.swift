#if canImport(Glibc)
    import Glibc
#endif

/// Which session bus the daemon joins: `DBUS_SESSION_BUS_ADDRESS`, else the user's bus socket
/// at `/run/user/UID/bus` when it is a socket of the user's (cron sets no address), else none,
/// with the reason `status` shows.
public enum SessionBusAddress: Equatable, Sendable {
    case found(String)
    case none(reason: String)

    public static func find(environment: String?, uid: uid_t = getuid()) -> SessionBusAddress {
        if let environment, !environment.isEmpty { return .found(environment) }
        let path = "/run/user/\(uid)/bus"
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return .none(reason: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and \(path) does not exist")
        }
        guard info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == uid else {
            return .none(
                reason: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and \(path) is not the user's socket")
        }
        return .found("unix:path=\(path)")
    }
}
