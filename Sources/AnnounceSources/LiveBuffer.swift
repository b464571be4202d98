import AnnounceModel
import AnnounceSystem
import Synchronization

/// Decoded float frames between a live stream's decode thread and its play's reads: a ring of
/// fixed size, allocated once, so memory stays flat however long the stream plays. Both sides
/// may wait (bounded by a time, or until `stop`); neither waits while holding the lock.
final class LiveBuffer: @unchecked Sendable {
    let channels: Int
    let capacity: Int
    private let samples: UnsafeMutablePointer<Float>

    private struct State {
        var start = 0
        var count = 0
        /// Nothing more comes: the input ended (nil), or failed (why).
        var ended = false
        var failure: AnnounceError?
        var stopped = false
        var readerWaits = false
        var writerWaits = false
    }
    private let state = Mutex(State())
    private let dataArrived = CountingSemaphore()
    private let roomFreed = CountingSemaphore()

    init(channels: Int, capacityFrames: Int) {
        self.channels = channels
        capacity = capacityFrames
        samples = .allocate(capacity: capacityFrames * channels)
    }

    deinit { samples.deallocate() }

    var frames: Int { state.withLock { $0.count } }

    /// Appends `frames` frames, waiting for room; false once stopped (what was not taken is dropped).
    func append(_ source: UnsafePointer<Float>, frames: Int) -> Bool {
        var done = 0
        while done < frames {
            let (copied, stopped) = state.withLock { state -> (Int, Bool) in
                if state.stopped { return (0, true) }
                let room = min(capacity - state.count, frames - done)
                var copied = 0
                while copied < room {
                    let at = (state.start + state.count + copied) % capacity
                    let run = min(room - copied, capacity - at)
                    (samples + at * channels).update(from: source + (done + copied) * channels, count: run * channels)
                    copied += run
                }
                state.count += copied
                state.writerWaits = copied == 0
                return (copied, false)
            }
            if stopped { return false }
            if copied > 0 {
                done += copied
                if state.withLock({ state in
                    defer { state.readerWaits = false }
                    return state.readerWaits
                }) {
                    dataArrived.signal()
                }
            } else {
                roomFreed.wait()
            }
        }
        return true
    }

    /// Takes up to `frames` frames into `destination` without waiting; 0 when none are there.
    func take(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let (taken, wake) = state.withLock { state -> (Int, Bool) in
            let count = min(frames, state.count)
            var copied = 0
            while copied < count {
                let at = (state.start + copied) % capacity
                let run = min(count - copied, capacity - at)
                (destination + copied * channels).update(from: samples + at * channels, count: run * channels)
                copied += run
            }
            state.start = (state.start + count) % capacity
            state.count -= count
            defer { if count > 0 { state.writerWaits = false } }
            return (count, count > 0 && state.writerWaits)
        }
        if wake { roomFreed.signal() }
        return taken
    }

    /// What ended the input once every frame before it was taken: nil while frames may come,
    /// `.success` at its end, `.failure` when it failed or was stopped.
    var end: Result<Void, AnnounceError>? {
        state.withLock { state in
            if state.stopped { return .failure(StreamSource.stopped) }
            guard state.count == 0, state.ended else { return nil }
            return state.failure.map { .failure($0) } ?? .success(())
        }
    }

    /// Waits until frames are there (at least `frames`, or the end), for at most `seconds`
    /// (nil: no limit); true when they came.
    @discardableResult
    func waitForFrames(_ frames: Int = 1, seconds: Double?) -> Bool {
        let deadline = seconds.map { SystemClock.monotonic() + $0 }
        while true {
            let ready = state.withLock { state -> Bool in
                let ready = state.count >= min(frames, capacity) || state.ended || state.stopped
                state.readerWaits = !ready
                return ready
            }
            if ready { return true }
            if let deadline {
                let left = deadline - SystemClock.monotonic()
                if left <= 0 || !dataArrived.wait(seconds: left) { return false }
            } else {
                dataArrived.wait()
            }
        }
    }

    /// The input ended (`failure` nil) or failed: the reader gets it after the frames before it.
    func finish(failure: AnnounceError?) {
        state.withLock { state in
            state.ended = true
            state.failure = failure
        }
        dataArrived.signal()
    }

    /// Ends every wait, now and from now on.
    func stop() {
        state.withLock { $0.stopped = true }
        dataArrived.signal()
        roomFreed.signal()
    }
}
