import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon's log lines go: its stderr (daemon.log when auto-started), through a
/// descriptor of their own. Libraries print to stderr too, and while a device opens stderr is
/// sent to a scratch file (LibraryNoise): a line another thread logs meanwhile must not go there.
public enum LogOutput {
    /// A duplicate of stderr, made on first use (the daemon makes it before it starts a thread;
    /// never while a capture has stderr).
    public static let descriptor: Int32 = stderrChange.withLock { _ in
        let fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)
        return fd >= 0 ? fd : STDERR_FILENO
    }

    /// Held while stderr points elsewhere (a capture).
    public static let stderrChange = Mutex(())

    /// One line, in one write: appends of several threads never interleave.
    public static func write(_ line: String) {
        var line = line
        line.withUTF8 { _ = Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}
