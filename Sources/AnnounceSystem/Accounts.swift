import AnnounceModel
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Users and groups from the user database (NSS), for the system queue (DESIGN §8).
public enum Accounts {
    public struct User: Equatable, Sendable {
        public var uid: uid_t
        public var gid: gid_t
        public var name: String
    }

    /// The user named `name`, if any.
    public static func user(named name: String) -> User? {
        withPasswordEntry { getpwnam_r(name, &$0, $1, $2, &$3) }
    }

    /// The user with `uid`, if the database has one.
    public static func user(uid: uid_t) -> User? {
        withPasswordEntry { getpwuid_r(uid, &$0, $1, $2, &$3) }
    }

    /// A user's name, else `uid N`.
    public static func name(of uid: uid_t) -> String { user(uid: uid)?.name ?? "uid \(uid)" }

    /// The group named `name`'s gid, if there is one.
    public static func group(named name: String) -> gid_t? {
        var entry = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, let found = result else { return nil }
        return found.pointee.gr_gid
    }

    /// Every group `user` is in, its primary one included, as the database says now (not as its
    /// processes were started: a user added to a group counts at once).
    public static func groups(of user: User) -> [gid_t] {
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let before = count
            if getgrouplist(user.name, user.gid, &groups, &count) >= 0 { return Array(groups.prefix(Int(count))) }
            if count <= before { count = before * 2 }
            if count > 65536 { return [user.gid] }
        }
    }

    /// Whether `uid` is in group `gid` (primary or supplementary).
    public static func isMember(_ uid: uid_t, of gid: gid_t) -> Bool {
        guard let user = user(uid: uid) else { return false }
        return groups(of: user).contains(gid)
    }

    /// Becomes `user` for good, with `groups` as its supplementary groups and `primary` as its
    /// group; then regaining root fails. Before any thread starts.
    public static func become(_ user: User, primary: gid_t, groups: [gid_t]) throws(AnnounceError) {
        let status = groups.withUnsafeBufferPointer {
            announce_drop_privileges(user.uid, primary, $0.baseAddress, Int32($0.count))
        }
        guard status == 0 else {
            throw .unavailable("cannot become user \(user.name) (uid \(user.uid)): \(systemErrorMessage(-status))")
        }
    }

    private static func withPasswordEntry(
        _ look: (inout passwd, UnsafeMutablePointer<CChar>, Int, inout UnsafeMutablePointer<passwd>?) -> Int32
    ) -> User? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let status = buffer.withUnsafeMutableBufferPointer { look(&entry, $0.baseAddress!, $0.count, &result) }
        guard status == 0, let found = result, let name = found.pointee.pw_name else { return nil }
        return User(uid: found.pointee.pw_uid, gid: found.pointee.pw_gid, name: String(cString: name))
    }
}
