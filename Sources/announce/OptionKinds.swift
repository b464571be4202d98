import AnnounceModel
import ArgumentParser

// The kinds of option that several commands declare, each written once, named explicitly as
// PlayFlags.swift says why. Signed and duration values may start with "-", so they are read
// unconditionally: "--gain -6" reads -6 as the value, and "--volume -1" or "--expire -5s" is out
// of range, not a missing value.

extension NameSpecification {
    /// `--long`, and `-short` when given.
    static func named(_ long: String, short: Character?) -> NameSpecification {
        short.map { [.customLong(long), .customShort($0)] } ?? .customLong(long)
    }
}

extension Flag where Value == Bool {
    /// `--long`, off unless given.
    init(wrappedValue: Bool, long: String, short: Character? = nil, help: String) {
        self.init(wrappedValue: wrappedValue, name: .named(long, short: short), help: ArgumentHelp(help))
    }
}

extension Option where Value: ExpressibleByArgument {
    /// `--long VALUE`, with a default.
    init(wrappedValue: Value, long: String, help: String, valueName: String? = nil) {
        self.init(
            wrappedValue: wrappedValue, name: .customLong(long), help: ArgumentHelp(help, valueName: valueName))
    }
}

extension Option {
    /// `--long VALUE`; nil when not given.
    init<Wrapped: ExpressibleByArgument>(
        long: String, short: Character? = nil, help: String, valueName: String? = nil,
        completion: CompletionKind? = nil
    ) where Value == Wrapped? {
        self.init(
            name: .named(long, short: short), help: ArgumentHelp(help, valueName: valueName), completion: completion)
    }

    /// `--long VALUE`, repeatable: every value given, in order.
    init<Element: ExpressibleByArgument>(
        wrappedValue: [Element], long: String, short: Character? = nil, help: String, valueName: String? = nil,
        completion: CompletionKind? = nil
    ) where Value == [Element] {
        self.init(
            wrappedValue: wrappedValue, name: .named(long, short: short),
            help: ArgumentHelp(help, valueName: valueName), completion: completion)
    }
}

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
