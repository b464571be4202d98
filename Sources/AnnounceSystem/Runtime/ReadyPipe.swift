import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The pipe an auto-starting client waits on (`announce daemon --ready-fd N`): the daemon
/// writes one word on it ("ready" once it listens, "running" when another daemon owns the
/// directory) and closes it; closed without a word, the daemon failed to start.
public final class ReadyPipe: Sendable {
    private let fd: Int32
    private let closed = Atomic<Bool>(false)

    /// The write end inherited as descriptor `fd`; owned from now on.
    public init(fd: Int32) {
        self.fd = fd
    }

    deinit { close() }

    /// Writes `word` and a newline, then closes the pipe; once.
    public func say(_ word: String) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let bytes = Array((word + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
    }

    private func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(fd) }
    }
}
