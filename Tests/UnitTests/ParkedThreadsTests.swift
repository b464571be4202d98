import Foundation
import Synchronization
import Testing

@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The plays' threads: a job after another runs on the thread the first left parked; jobs at
/// once each get a thread; at most `keep` wait between jobs, and `release` ends them.
@Suite struct ParkedThreadsTests {
    /// Threads of this process named `name`, from /proc.
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    /// Waits up to 5 s for `condition`, looking every millisecond.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<5000 {
            if condition() { return true }
            usleep(1000)
        }
        return condition()
    }

    @Test func aJobAfterAnotherRunsOnTheParkedThread() {
        let pool = ParkedThreads(named: "ann-ptest-a", keep: 2)
        defer { pool.release() }
        let ran = Mutex<[pthread_t]>([])
        let done = CountingSemaphore()
        for _ in 0..<3 {
            pool.run {
                ran.withLock { $0.append(pthread_self()) }
                done.signal()
            }
            done.wait()
            // Parked before the next job is given: it is then taken by the same thread.
            #expect(Self.eventually { pool.parkedCount == 1 })
            #expect(Self.threads(named: "ann-ptest-a") == 1)
        }
        let tids = ran.withLock { $0 }
        #expect(tids.count == 3 && Set(tids).count == 1, "threads: \(tids)")
    }

    @Test func jobsAtOnceEachHaveAThreadAndAtMostKeepStayParked() {
        let pool = ParkedThreads(named: "ann-ptest-b", keep: 2)
        let gate = CountingSemaphore()
        let done = CountingSemaphore()
        let ran = Mutex<Set<pthread_t>>([])
        for _ in 0..<4 {
            pool.run {
                ran.withLock { _ = $0.insert(pthread_self()) }
                gate.wait()
                done.signal()
            }
        }
        #expect(Self.eventually { ran.withLock { $0.count } == 4 })
        for _ in 0..<4 { gate.signal() }
        for _ in 0..<4 { done.wait() }
        #expect(Self.eventually { pool.parkedCount == 2 })
        #expect(Self.eventually { Self.threads(named: "ann-ptest-b") == 2 })
        pool.release()
        #expect(Self.eventually { Self.threads(named: "ann-ptest-b") == 0 })
    }
}
