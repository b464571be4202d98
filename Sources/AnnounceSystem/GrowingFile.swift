import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel

// STUB (replaced by the i14-input branch's GrowingFile): polling, same API.
public final class GrowingFile: Sendable {
    private struct State { var available: Int64; var expected: Int64?; var complete = false; var failure: AnnounceError? }
    private let state: Mutex<State>
    public let path: String

    public init(path: String, available: Int64 = 0, expectedLength: Int64? = nil) {
        self.path = path
        state = Mutex(State(available: available, expected: expectedLength))
    }
    public func grew(to available: Int64) { state.withLock { $0.available = available } }
    public func expect(length: Int64?) { state.withLock { $0.expected = length } }
    public func finish() { state.withLock { $0.complete = true } }
    public func fail(_ error: AnnounceError) { state.withLock { $0.failure = error } }
    public var expectedLength: Int64? { state.withLock { $0.expected } }
    public var isComplete: Bool { state.withLock { $0.complete } }
    public func wait(forByteAt offset: Int64, cancellation: Cancellation?) throws(AnnounceError) -> Int64 {
        while true {
            let s = state.withLock { $0 }
            if let failure = s.failure { throw failure }
            if s.complete || s.available > offset { return s.available }
            if cancellation?.isFired == true { throw .internal("cancelled") }
            usleep(10_000)
        }
    }
    public func waitForEnd(cancellation: Cancellation?) throws(AnnounceError) -> Int64 {
        while true {
            let s = state.withLock { $0 }
            if let failure = s.failure { throw failure }
            if s.complete { return s.available }
            if cancellation?.isFired == true { throw .internal("cancelled") }
            usleep(10_000)
        }
    }
}
