import FoundationEssentials

/// The one JSON configuration, for the wire, the spool and what the CLI prints: keys sorted,
/// slashes as they are.
public enum JSONCoding {
    /// The value's JSON; nil only for a value JSON cannot hold (a NaN), which our types never are.
    public static func encode<Value: Encodable>(_ value: Value) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { [UInt8]($0) }
    }

    /// As `encode`, with `fallback` for the value that cannot be held (a reader catches it).
    public static func encode<Value: Encodable>(_ value: Value, orElse fallback: String) -> [UInt8] {
        encode(value) ?? Array(fallback.utf8)
    }

    public static func decode<Value: Decodable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws -> Value
    {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
