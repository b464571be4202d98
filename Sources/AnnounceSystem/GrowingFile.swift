import AnnounceModel
import Synchronization

/// A file that another thread of this process is still writing (a download), as its readers
/// wait on it: how much of it is there, how long it will be, whether it is complete or failed.
/// The writer says so after each write; a reader blocks until the bytes it wants are there.
public final class GrowingFile: Sendable {
    private struct State {
        var available: Int64
        var expectedLength: Int64?
        var isComplete = false
        var failure: AnnounceError?
        /// Readers asleep until the next change.
        var sleepers: [CountingSemaphore] = []
    }

    public let path: String
    private let state: Mutex<State>

    public init(path: String, available: Int64 = 0, expectedLength: Int64? = nil) {
        self.path = path
        state = Mutex(State(available: available, expectedLength: expectedLength))
    }

    /// Writer: the file now holds `available` bytes from its start (after write() returned).
    /// May go down to 0, when a server ignored a Range request and the file is rewritten
    /// from its start: truncate it, then say so, then write again (a reader that finds fewer
    /// bytes than it was told looks again).
    public func grew(to available: Int64) {
        change { $0.available = available }
    }

    /// Writer: the body's full length once known (a Content-Length), nil when the server did not say.
    public func expect(length: Int64?) {
        change { $0.expectedLength = length }
    }

    /// Writer: complete; the length is what is available now.
    public func finish() {
        change { $0.isComplete = true }
    }

    /// Writer: the download stopped for good; readers waiting get `error`.
    public func fail(_ error: AnnounceError) {
        change { $0.failure = error }
    }

    /// Reader: blocks until at least `offset + 1` bytes are there, or the file is complete (then
    /// the final length), and returns the bytes available. Throws the writer's failure, or when
    /// `cancellation` fires (the play is being stopped). Bytes already there are given even
    /// after a failure: only waiting for more throws it.
    public func wait(forByteAt offset: Int64, cancellation: Cancellation?) throws(AnnounceError) -> Int64 {
        try wait(cancellation: cancellation) { $0.available > offset || $0.isComplete ? $0.available : nil }
    }

    /// Reader: blocks until complete (or failed or cancelled) and returns the length.
    public func waitForEnd(cancellation: Cancellation?) throws(AnnounceError) -> Int64 {
        try wait(cancellation: cancellation) { $0.isComplete ? $0.available : nil }
    }

    public var expectedLength: Int64? { state.withLock { $0.expectedLength } }

    public var isComplete: Bool { state.withLock { $0.isComplete } }

    /// Applies a writer's news, unless the file is already complete or failed (both final),
    /// and wakes every reader to look again.
    private func change(_ update: (inout State) -> Void) {
        let woken = state.withLock { state -> [CountingSemaphore] in
            guard !state.isComplete, state.failure == nil else { return [] }
            update(&state)
            defer { state.sleepers = [] }
            return state.sleepers
        }
        for sleeper in woken { sleeper.signal() }
    }

    /// Sleeps until `ready` gives a value. A wake-up (a change, the cancellation) only makes it
    /// look again, so one that comes twice is harmless.
    private func wait(cancellation: Cancellation?, until ready: (State) -> Int64?) throws(AnnounceError) -> Int64 {
        let wake = CountingSemaphore()
        let token = cancellation?.register { wake.signal() }
        defer { cancellation?.remove(token) }
        while true {
            if cancellation?.isFired == true {
                throw .cannotOpen(path: path, reason: "stopped while waiting for its download")
            }
            let outcome = state.withLock { state -> Result<Int64?, AnnounceError> in
                if let value = ready(state) { return .success(value) }
                if let failure = state.failure { return .failure(failure) }
                state.sleepers.append(wake)
                return .success(nil)
            }
            switch outcome {
            case .success(let value?): return value
            case .success(nil): wake.wait()
            case .failure(let failure): throw failure
            }
        }
    }
}
