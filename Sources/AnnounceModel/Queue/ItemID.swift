/// The daemon's name for one accepted item (12 hex digits): never a path, a device, a tag or a
/// zone's request id.
public struct ItemID: TypedString {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A new item's id: 12 random lower-case hex digits (the daemon draws again while its spool
    /// knows the one drawn).
    public static func random() -> ItemID {
        ItemID(String(UInt64.random(in: 0..<(1 << 48)) | (1 << 48), radix: 16).dropFirst().description)
    }

    /// Hex digits only, at most 32: what the daemon makes. Anything else read back from its own
    /// records never becomes a path.
    public var isWellFormed: Bool {
        !rawValue.isEmpty && rawValue.utf8.count <= 32
            && rawValue.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
