import Foundation
import Synchronization
import Testing

@testable import AnnounceModel
@testable import AnnounceSystem

/// A download's shared state: a reader waits for the byte it wants, the end, the failure or
/// its play's stop, and nothing else wakes it for good.
@Suite(.timeLimit(.minutes(1))) struct GrowingFileTests {
    /// Runs `body` on a thread of its own; the result once it returns, nil if it has not
    /// within 10 s (a reader left waiting).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> () -> T? {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        return { done.wait(timeout: .now() + 10) == .success ? result.withLock { $0 } : nil }
    }

    @Test func bytesAlreadyThereAreGivenAtOnceAndTheEndAfterFinish() throws {
        let file = GrowingFile(path: "/tmp/x", available: 100, expectedLength: 400)
        #expect(try file.wait(forByteAt: 99, cancellation: nil) == 100)
        #expect(file.expectedLength == 400 && !file.isComplete)
        file.grew(to: 250)
        file.finish()
        #expect(file.isComplete)
        #expect(try file.wait(forByteAt: 300, cancellation: nil) == 250, "past the end of a complete file: its length")
        #expect(try file.waitForEnd(cancellation: nil) == 250)
    }

    @Test func aWaitingReaderWakesWhenTheByteArrivesNotBefore() throws {
        let file = GrowingFile(path: "/tmp/x")
        file.grew(to: 1_000)  // not yet: byte 1000 is the 1001st
        let result = Self.onThread {
            Result { () throws(AnnounceError) in try file.wait(forByteAt: 1_000, cancellation: nil) }
        }
        file.grew(to: 4_096)
        #expect(try result()?.get() == 4_096)
    }

    @Test func aFailureReachesEveryWaitingReaderButNotBytesAlreadyThere() throws {
        let file = GrowingFile(path: "/tmp/x", available: 10)
        let failure = AnnounceError.cannotOpen(path: "http://host/a.mp3", reason: "connection reset")
        let byte = Self.onThread {
            Result { () throws(AnnounceError) in try file.wait(forByteAt: 10, cancellation: nil) }
        }
        let end = Self.onThread { Result { () throws(AnnounceError) in try file.waitForEnd(cancellation: nil) } }
        file.fail(failure)
        #expect(throws: failure) { try byte()?.get() }
        #expect(throws: failure) { try end()?.get() }
        #expect(try file.wait(forByteAt: 9, cancellation: nil) == 10)
        file.finish()  // final: a failed download stays failed
        #expect(!file.isComplete)
    }

    @Test func aStopWakesAWaitingReader() {
        let file = GrowingFile(path: "/tmp/x", expectedLength: 100)
        let stop = Cancellation()
        let started = DispatchSemaphore(value: 0)
        let result = Self.onThread {
            started.signal()
            return Result { () throws(AnnounceError) in try file.wait(forByteAt: 0, cancellation: stop) }
        }
        started.wait()
        stop.fire()
        let outcome = result()
        #expect(outcome != nil, "the stop must end the wait")
        #expect(throws: AnnounceError.cannotOpen(path: "/tmp/x", reason: "stopped while waiting for its download")) {
            try outcome?.get()
        }
        // Stopped before it waits: it does not wait at all.
        #expect(throws: AnnounceError.self) { try file.waitForEnd(cancellation: stop) }
    }
}
