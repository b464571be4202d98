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
    let context = Unmanaged.passRetained(
        Box({
            announce_name_this_thread(name)
            body()
        })
    ).toOpaque()
    let status = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    precondition(status == 0, "cannot start a thread: \(systemErrorMessage(status))")
    return thread
}

/// `transform` of each element, on up to `threads` threads (the calling one among them), in
/// the elements' order: for start-up work that would keep a socket from answering.
package func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: [Element], threads: Int, _ transform: @escaping @Sendable (Element) -> Result
) -> [Result] {
    let count = elements.count
    let threads = max(1, min(threads, count))
    guard threads > 1 else { return elements.map(transform) }
    let slots = Slots<Result>(count)
    let fill: @Sendable (Range<Int>) -> Void = { range in
        for index in range { slots.buffer[index] = transform(elements[index]) }
    }
    // Part p of n is elements[p·count/n ..< (p+1)·count/n]: never empty, never past the end.
    let part: @Sendable (Int) -> Range<Int> = { p in p * count / threads..<(p + 1) * count / threads }
    let others = (1..<threads).map { p in startThread(named: "announce-start") { fill(part(p)) } }
    fill(part(0))
    for thread in others { pthread_join(thread, nil) }
    return slots.buffer.map { $0! }
}

/// Results that threads fill, each its own indices.
private final class Slots<Value>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Value?>
    init(_ count: Int) {
        buffer = .allocate(capacity: count)
        buffer.initialize(repeating: nil)
    }
    deinit { buffer.deinitialize().deallocate() }
}

/// Processors this process may run on (its affinity mask, as a container or taskset limits it),
/// at least 1.
package var usableProcessors: Int { Int(announce_usable_processors()) }
