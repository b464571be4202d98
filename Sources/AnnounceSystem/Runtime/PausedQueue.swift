import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// `announce pause` is a file, `paused` in the runtime directory: it outlives the daemon
/// (a restarted or auto-started one stays paused) and a client reads it without one.
extension RuntimeDirectory {
    /// When the user paused the queue (the marker's modification time); nil when not paused.
    public var pausedSince: Double? {
        var info = stat()
        guard stat(pausedMarkerPath, &info) == 0 else { return nil }
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    /// Pauses (the marker is made once: a second pause keeps the first time) or resumes.
    public func setPaused(_ paused: Bool) throws(AnnounceError) {
        if !paused {
            guard unlink(pausedMarkerPath) == 0 || errno == ENOENT else {
                throw .unavailable("cannot remove \(pausedMarkerPath): \(systemErrorMessage(errno))")
            }
        } else if pausedSince == nil {
            try writeFileAtomically([], to: pausedMarkerPath)
        }
    }
}
