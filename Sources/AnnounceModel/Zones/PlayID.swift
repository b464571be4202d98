/// A zone play's id (docs/ZONES.md, Payloads): 16 to 64 lowercase hex digits, made by its sender.
/// The same id twice is the same play. It names the play's result topic and each host's record of
/// it (`RUNTIME/zones/seen/ID`); never an item's id.
public struct PlayID: TypedString {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A new id: 128 random bits.
    public static func random() -> PlayID {
        PlayID(
            (0..<4).map { _ in String(UInt32.random(in: 0...UInt32.max), radix: 16) }
                .map { String(repeating: "0", count: 8 - $0.count) + $0 }.joined())
    }

    /// What a sender must send: anything else is neither answered nor made a file name.
    public var isWellFormed: Bool {
        (16...64).contains(rawValue.utf8.count)
            && rawValue.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
