import AnnounceModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A POSIX counting semaphore: posting never allocates or blocks, so the
/// playback thread can wake the decode side and vice versa.
package final class CountingSemaphore: @unchecked Sendable {
    private let handle: UnsafeMutablePointer<sem_t>

    package init(value: UInt32 = 0) {
        handle = .allocate(capacity: 1)
        sem_init(handle, 0, value)
    }

    deinit {
        sem_destroy(handle)
        handle.deallocate()
    }

    package func signal() { sem_post(handle) }

    /// The semaphore itself, for a C signal handler to post (`announce_interrupt_posting`).
    package var posix: UnsafeMutablePointer<sem_t> { handle }

    package func wait() {
        while sem_wait(handle) != 0 && errno == EINTR {}
    }

    /// Waits at most `seconds`; false when the time ran out first.
    package func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)  // sem_timedwait's clock
        let nanoseconds = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while sem_timedwait(handle, &deadline) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }
}

/// A wake-up that costs one atomic exchange to signal when nobody is asleep,
/// so the playback thread can signal after every period without a syscall.
/// The sleeper states its condition; spurious wake-ups just re-check it.
package final class Wakeup: @unchecked Sendable {
    private let semaphore = CountingSemaphore()
    private let sleeping = Atomic<Bool>(false)

    package init() {}

    /// Returns once `condition` holds. `condition` must read state that the
    /// signalling side changes before it calls `signal`.
    package func wait(until condition: () -> Bool) {
        while !condition() {
            sleeping.store(true, ordering: .sequentiallyConsistent)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if condition() {
                sleeping.store(false, ordering: .relaxed)
                return
            }
            semaphore.wait()
        }
    }

    package func signal() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if sleeping.exchange(false, ordering: .sequentiallyConsistent) { semaphore.signal() }
    }
}
