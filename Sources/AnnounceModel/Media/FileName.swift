import FoundationEssentials

/// A file's name as Linux has it: bytes, which need not be UTF-8 (a Latin-1 `caf\xe9.wav`).
/// Files are opened by these bytes; people are shown `text`. On the wire and in the spool it is
/// base64 (`clip.pathBytes`, `alert.pathBytes`): a JSON string holds Unicode, not bytes.
public struct FileName: Codable, Hashable, Sendable, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }

    public init(_ path: String) { bytes = Array(path.utf8) }

    /// As messages, events and status show it: each byte that is not UTF-8 as U+FFFD.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public var description: String { text }

    /// True when `text` names the file: no byte was replaced.
    public var isUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    public var isAbsolute: Bool { bytes.first == UInt8(ascii: "/") }

    /// `self` against the directory `base` (itself absolute): `base/self`, a leading `./` dropped.
    public func absolute(against base: FileName) -> FileName {
        if isAbsolute { return self }
        let name = bytes.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) ? Array(bytes.dropFirst(2)) : bytes
        let directory = base.bytes == [UInt8(ascii: "/")] ? [] : base.bytes
        return FileName(bytes: directory + [UInt8(ascii: "/")] + name)
    }

    /// The name as a C string for `open(2)` and the like (a NUL inside ends it early: callers
    /// refuse such names first, `ItemRequest.pathProblem`).
    public func withCString<Result, Failure: Error>(_ body: (UnsafePointer<CChar>) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        try body(bytes.map { CChar(bitPattern: $0) } + [0])
    }

    public init(from decoder: any Decoder) throws {
        // Invalid base64 is a `dataCorrupted` error: "items[0].clip.pathBytes: invalid value".
        bytes = Array(try decoder.singleValueContainer().decode(Data.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Data(bytes))
    }
}

/// A clip or an alert: the file is shown by `path` and, when its name is not UTF-8, opened by
/// `pathBytes` (docs/protocol.md).
public protocol NamedFile {
    var path: String { get set }
    var pathBytes: FileName? { get set }
}

extension NamedFile {
    /// The file it plays, by its bytes. Set, `path` shows it and `pathBytes` carries it only
    /// when it is not UTF-8: every other request stays as it was.
    public var file: FileName {
        get { pathBytes ?? FileName(path) }
        set {
            path = newValue.text
            pathBytes = newValue.isUTF8 ? nil : newValue
        }
    }
}
