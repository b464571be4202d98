import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// Starts a joinable POSIX thread running `body`.
/// `name` (at most 15 bytes) is what `top -H` and /proc/PID/task/*/comm show.
package func startThread(named name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box({
        announce_name_this_thread(name)
        body()
    })).toOpaque()
    let status = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(status == 0, "cannot start a thread: \(systemErrorMessage(status))")
    return thread
}
