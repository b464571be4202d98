/// A value kept out of line: a queued item carries its rare parts (speech, a live stream,
/// handed files) as one pointer each instead of ~180 bytes inline in every item. Immutable:
/// a change makes a new box. Coded as the value itself.
public final class Boxed<Value: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public let value: Value

    public init(_ value: Value) { self.value = value }

    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public static func == (a: Boxed, b: Boxed) -> Bool { a === b || a.value == b.value }
}
