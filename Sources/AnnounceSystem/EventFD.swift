import AnnounceModel
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking eventfd: one thread signals, another wakes from poll() on `fd`
/// and drains it. Signalling and draining are one syscall each (no allocation,
/// no lock), so the playback thread may do either.
package final class EventFD: Sendable {
    package let fd: Int32

    package init() throws(AnnounceError) {
        let fd = announce_eventfd()
        guard fd >= 0 else { throw .internal("eventfd: \(systemErrorMessage(-fd))") }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Wakes whoever polls `fd`.
    package func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Clears the pending wake-ups (none pending is fine: the read fails with EAGAIN).
    package func drain() {
        var count: UInt64 = 0
        _ = read(fd, &count, 8)
    }

    /// Waits at most `milliseconds` (-1: for ever) for a signal; true when one came (it is drained).
    package func wait(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) > 0 else { return false }
        drain()
        return true
    }
}
