#if canImport(Glibc)
import Glibc
#endif

/// A POSIX counting semaphore: posting never allocates or blocks, so the
/// playback thread can wake the decode side and vice versa.
final class Semaphore: @unchecked Sendable {
    private let handle: UnsafeMutablePointer<sem_t>

    init(value: UInt32 = 0) {
        handle = .allocate(capacity: 1)
        sem_init(handle, 0, value)
    }

    deinit {
        sem_destroy(handle)
        handle.deallocate()
    }

    func signal() { sem_post(handle) }

    func wait() {
        while sem_wait(handle) != 0 && errno == EINTR {}
    }
}
