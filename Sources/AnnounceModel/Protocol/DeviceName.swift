/// An ALSA PCM name as requests, the configuration and events carry it (`default`, `hw:1`,
/// `pulse`, `file:FILE=/tmp/x.wav,FORMAT=wav`), with the rules of what a request may name, so
/// that client and daemon share them.
public struct DeviceName: TypedString {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Why this cannot be a request's device: empty, longer than `Limits.maxDeviceNameBytes`,
    /// or a `file:` device whose FILE is relative (the daemon's directory is not the caller's;
    /// `relativeFileAllowed` for a client, which makes it absolute before it sends).
    public func problem(relativeFileAllowed: Bool = false) -> DeviceProblem? {
        if rawValue.isEmpty { return .emptyName }
        if rawValue.utf8.count > Limits.maxDeviceNameBytes { return .nameTooLong }
        guard !relativeFileAllowed, let file = fileArgument else { return nil }
        return file.hasPrefix("/") ? nil : .relativeFile(self)
    }

    /// Why a clip cannot play on `device` (nil: the daemon's, which counts too) and `extra`:
    /// a bad name, extra devices outside category multi-route, more than `Limits.maxDevices`,
    /// or a name given twice.
    public static func problem(
        device: DeviceName?, extra: [DeviceName], category: SessionCategory,
        relativeFileAllowed: Bool = false
    ) -> DeviceProblem? {
        let given = [device].compactMap { $0 } + extra
        for name in given {
            if let problem = name.problem(relativeFileAllowed: relativeFileAllowed) { return problem }
        }
        guard !extra.isEmpty else { return nil }
        if category != .multiRoute { return .severalNeedMultiRoute(category) }
        if extra.count + 1 > Limits.maxDevices { return .tooMany(extra.count + 1) }
        var seen: Set<DeviceName> = []
        for name in given where !seen.insert(name).inserted { return .givenTwice(name) }
        return nil
    }

    /// The FILE of a `file:` name (named or first positional), or nil for other names.
    public var fileArgument: String? {
        guard rawValue.hasPrefix("file:") else { return nil }
        return Self.fileArgumentIndex(in: arguments).map { arguments[$0].value }
    }

    /// Which of a `file:` name's `arguments` is its FILE: the named one, else the first positional.
    public static func fileArgumentIndex(in arguments: [(name: String?, value: String)]) -> Int? {
        arguments.firstIndex { $0.name == "FILE" } ?? arguments.firstIndex { $0.name == nil }
    }

    /// The arguments after `NAME:`, `KEY=VALUE` or positional, values optionally quoted; none without a colon.
    public var arguments: [(name: String?, value: String)] {
        let name = rawValue
        guard let colon = name.firstIndex(of: ":") else { return [] }
        var pieces: [String] = []
        var current = ""
        var quote: Character?
        for character in name[name.index(after: colon)...] {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "," {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty || !pieces.isEmpty { pieces.append(current) }
        return pieces.map { piece in
            guard let equals = piece.firstIndex(of: "="), !piece[..<equals].contains("/") else { return (nil, piece) }
            return (String(piece[..<equals]), String(piece[piece.index(after: equals)...]))
        }
    }
}

/// What is wrong with the devices a request names. The rule is decided once (`DeviceName`);
/// the daemon says it in the request's field names (`description`), the CLI in its options'.
public enum DeviceProblem: Equatable, Sendable, CustomStringConvertible {
    case emptyName
    case nameTooLong
    /// A `file:` device whose FILE is not absolute.
    case relativeFile(DeviceName)
    /// Several devices, in a category other than multi-route.
    case severalNeedMultiRoute(SessionCategory)
    /// This many devices, more than `Limits.maxDevices`.
    case tooMany(Int)
    case givenTwice(DeviceName)

    public var description: String {
        switch self {
        case .emptyName, .nameTooLong: "device name is empty or too long"
        case .relativeFile(let name): "device \(name): FILE must be an absolute path"
        case .severalNeedMultiRoute(let category): "extraDevices need category multi-route, not \(category)"
        case .tooMany(let count): "at most \(Limits.maxDevices) devices, not \(count)"
        case .givenTwice(let name): "device \(name) is given twice"
        }
    }
}
