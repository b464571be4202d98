import AnnounceModel
import ArgumentParser

// The kinds of option that several commands declare, each written once. Their values may start
// with "-", so they are read unconditionally: "--gain -6" reads -6 as the value, and "--volume -1"
// or "--expire -5s" is out of range, not a missing value. Named explicitly, as PlayFlags.swift says why.

extension Option where Value: ExpressibleByArgument {
    /// `--name VALUE`, where the value may be negative, with a default.
    init(wrappedValue: Value, signed name: String, help: String, valueName: String? = nil) {
        self.init(
            wrappedValue: wrappedValue, name: .customLong(name), parsing: .unconditional,
            help: ArgumentHelp(help, valueName: valueName))
    }
}

extension Option {
    /// `--name VALUE`, where the value may be negative; nil when not given.
    init<Wrapped: ExpressibleByArgument>(signed name: String, help: String, valueName: String? = nil)
    where Value == Wrapped? {
        self.init(name: .customLong(name), parsing: .unconditional, help: ArgumentHelp(help, valueName: valueName))
    }

    /// `--name DURATION`, a span of time (10s, 5m, 1m30s, 1:30); nil when not given.
    init(duration name: String, help: String, valueName: String = "duration") where Value == TimeSpan? {
        self.init(
            name: .customLong(name), parsing: .unconditional, help: ArgumentHelp(help, valueName: valueName),
            transform: TimeSpan.argument)
    }
}
