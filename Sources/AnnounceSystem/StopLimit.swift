import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How long a daemon's stop may take, services and the process's exit together. Armed when
/// the stop begins; if the process still runs `seconds` later, `expired` is called on a thread
/// of its own with what held it: the service being stopped, or the exit after them (the C
/// libraries' exit handlers). A stop every service bounds ends first, taking the thread with it.
public final class StopLimit: Sendable {
    private let holder = Mutex(StopLimit.exiting)
    /// What holds the stop once every service has stopped.
    public static let exiting = "the process's exit"

    public init(seconds: Double, expired: @escaping @Sendable (_ holder: String) -> Void) {
        pthread_detach(
            startThread(named: "announce-stop") { [self] in
                _ = CountingSemaphore().wait(seconds: seconds)  // never signalled: a sleep
                expired(holder.withLock { $0 })
            })
    }

    /// `name` is being stopped now; nil: every service has stopped.
    func holding(_ name: String?) {
        holder.withLock { $0 = name ?? Self.exiting }
    }
}
