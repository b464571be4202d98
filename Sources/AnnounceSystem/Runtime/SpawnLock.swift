import AnnounceModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The clients' spawn lock (`spawn.lock` in the runtime directory), held while a daemon is
/// being started, so that fifty clients at once start one. Given back by `release()` or
/// when the last reference goes.
public final class SpawnLock: Sendable {
    private let fd: Int32
    private let released = Atomic<Bool>(false)

    /// Waits for the lock at `path` (created 0600 if missing).
    init(path: String) throws(AnnounceError) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .unavailable("cannot open \(path): \(systemErrorMessage(errno))") }
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    }

    deinit { release() }

    /// Gives the lock back; once.
    public func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { close(fd) }
    }
}

extension RuntimeDirectory {
    /// Waits for and takes the clients' spawn lock.
    public func lockSpawn() throws(AnnounceError) -> SpawnLock {
        try SpawnLock(path: spawnLockPath)
    }
}
