import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Threads for work that comes and goes (a play each), kept parked between jobs: a job goes to
/// a parked thread, woken at once, instead of a new one, whose creation and first run cost
/// 0.2 ms on a busy machine. At most `keep` threads wait, each blocked on its semaphore (no
/// wake-ups); a job with none parked starts a thread. `release` ends the parked ones.
package final class ParkedThreads: Sendable {
    private final class Parked: Sendable {
        let wake = CountingSemaphore()
        /// The next job; nil when woken to end.
        let job = Mutex<(@Sendable () -> Void)?>(nil)
    }

    private let name: String
    private let keep: Int
    private struct State {
        var parked: [Parked] = []
        var released = false
    }
    private let state = Mutex(State())

    /// `name`: the threads' (`startThread`); `keep`: how many wait between jobs at most.
    package init(named name: String, keep: Int) {
        self.name = name
        self.keep = keep
    }

    /// How many threads wait for a job now.
    package var parkedCount: Int { state.withLock { $0.parked.count } }

    /// Runs `job` on a parked thread, else on a new one.
    package func run(_ job: @escaping @Sendable () -> Void) {
        if let parked = state.withLock({ $0.parked.popLast() }) {
            parked.job.withLock { $0 = job }
            parked.wake.signal()
            return
        }
        pthread_detach(startThread(named: name) { [self] in serve(job) })
    }

    /// Ends the threads that wait; those at work end after their job.
    package func release() {
        let parked = state.withLock { state in
            state.released = true
            defer { state.parked.removeAll() }
            return state.parked
        }
        for thread in parked { thread.wake.signal() }
    }

    /// A thread's life: its first job, then each one it is given while parked. A job (and what
    /// it holds) goes before the thread parks.
    private func serve(_ first: @escaping @Sendable () -> Void) {
        let me = Parked()
        me.job.withLock { $0 = first }
        repeat {
            guard let job = me.job.withLock({ $0.take() }) else { return }
            job()
        } while park(me)
    }

    /// Waits for the next job; false when it should end instead.
    private func park(_ me: Parked) -> Bool {
        let parks = state.withLock { state in
            guard !state.released, state.parked.count < keep else { return false }
            state.parked.append(me)
            return true
        }
        if parks { me.wake.wait() }
        return parks
    }
}
