import AnnounceModel
import AnnounceSystem
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The system queue's callers (DESIGN §8): who each is, from the socket (SO_PEERCRED, as at
/// connect), never from a request, and what that lets it do.
struct SystemAccess: Sendable {
    let settings: SystemSettings
    /// `SystemSettings.group`'s gid: its members may queue.
    let group: gid_t
    /// `[system] control-group`'s gid, when it names one that exists.
    let controlGroup: gid_t?
    /// The daemon's own uid: its zones' bridge is a client of its socket.
    let daemonUID: uid_t

    init(settings: SystemSettings, group: gid_t, controlGroup: gid_t?, daemonUID: uid_t) {
        self.settings = settings
        self.group = group
        self.controlGroup = controlGroup
        self.daemonUID = daemonUID
    }

    /// The groups looked up by name (`SystemSettings.group`, whose absence the daemon's start
    /// reports; `[system] control-group`).
    init(settings: SystemSettings, daemonUID: uid_t) {
        self.init(
            settings: settings, group: Accounts.group(named: SystemSettings.group) ?? gid_t.max,
            controlGroup: settings.controlGroup.flatMap(Accounts.group(named:)), daemonUID: daemonUID)
    }

    /// The caller at the other end of `fd`; nil when the socket cannot say (it is then refused).
    func caller(of fd: Int32) -> Caller {
        var uid = uid_t.max
        var gid = gid_t.max
        guard announce_peer_ids(fd, &uid, &gid) == 0 else {
            return Caller(uid: uid, name: "an unknown caller", isTrusted: false, mayEnqueue: false, mayControl: false)
        }
        return caller(uid: uid)
    }

    func caller(uid: uid_t) -> Caller {
        let user = Accounts.user(uid: uid)
        let groups = user.map(Accounts.groups(of:)) ?? []
        let trusted = uid == 0 || uid == daemonUID
        return Caller(
            uid: uid, name: user?.name ?? "uid \(uid)", isTrusted: trusted, isSelf: uid == daemonUID,
            mayEnqueue: trusted || groups.contains(group),
            mayControl: uid == 0 || uid == daemonUID || controlGroup.map(groups.contains) == true)
    }

    /// The control group's name when it exists (else only root controls, and no message names it).
    var controlGroupName: String? { controlGroup == nil ? nil : settings.controlGroup }

    /// Devices a non-root caller may name: `[system] devices`, else the daemon's own.
    func allowedDevices(daemonDevice: DeviceName) -> [DeviceName] {
        settings.devices.isEmpty ? [daemonDevice] : settings.devices
    }
}
