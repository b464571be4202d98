/// Seconds since the epoch, as a function: the daemon's policies take one, so tests inject time.
public typealias WallClock = @Sendable () -> Double
