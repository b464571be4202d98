/// A string with a type of its own (`ItemID`, `DeviceName`), so that one is never passed where
/// another is meant. On the wire, in the spool and in the configuration it is the bare string
/// (a key where it keys a map); in text, the string itself.
public protocol TypedString: RawRepresentable<String>, Hashable, Comparable, Codable, CodingKeyRepresentable,
    Sendable, ExpressibleByStringInterpolation, CustomStringConvertible
{
    init(rawValue: String)
}

extension TypedString {
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public var codingKey: any CodingKey { rawValue.codingKey }
    public init?<Key: CodingKey>(codingKey: Key) { self.init(rawValue: codingKey.stringValue) }

    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension Sequence where Element: TypedString {
    /// `3f9c0a6e21b4, a0b1c2d3e4f5`: as messages list them.
    public var listed: String { map(\.rawValue).joined(separator: ", ") }
}
