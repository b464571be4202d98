import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

extension QuietMode {
    /// The system's local time zone (TZ, /etc/localtime), through localtime_r; 0 for a time
    /// it cannot place (not finite, or beyond time_t or the calendar).
    public static let systemLocalMinutes: LocalMinutes = { epoch in
        var fields = tm()
        // time_t(exactly:): time_t(_:) traps on NaN, infinities and out-of-range values.
        guard var clock = time_t(exactly: epoch.rounded(.down)), localtime_r(&clock, &fields) != nil else { return 0 }
        return Int(fields.tm_hour) * 60 + Int(fields.tm_min)
    }
}
