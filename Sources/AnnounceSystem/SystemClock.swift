import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

public enum SystemClock {
    /// The real time (CLOCK_REALTIME): what schedules, quiet hours and spool times are in.
    public static let wall: WallClock = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Seconds on CLOCK_MONOTONIC, which no clock change moves: for how long something waited.
    public static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
