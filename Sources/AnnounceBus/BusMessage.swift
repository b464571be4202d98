import AnnounceModel
import CSDBus

#if canImport(Glibc)
    import Glibc
#endif

/// A value to write on the bus: the few D-Bus types MPRIS needs.
enum BusValue: Equatable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case int64(Int64)
    case double(Double)
    case strings([String])
    /// a{sv}, in the order given.
    case dictionary([(String, BusValue)])

    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .int64: "x"
        case .double: "d"
        case .strings: "as"
        case .dictionary: "a{sv}"
        }
    }

    static func == (lhs: BusValue, rhs: BusValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.strings(let a), .strings(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a.elementsEqual(b) { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }
}

/// One sd-bus message, borrowed (a handler's) or owned (made here, unreferenced at deinit).
final class BusMessage {
    let raw: OpaquePointer
    private let owned: Bool

    init(borrowing raw: OpaquePointer) {
        self.raw = raw
        owned = false
    }

    init(owning raw: OpaquePointer) {
        self.raw = raw
        owned = true
    }

    deinit { if owned { announce_bus_unref(raw) } }

    var member: String? { announce_bus_member(raw).map { String(cString: $0) } }
    var interface: String? { announce_bus_interface(raw).map { String(cString: $0) } }
    var sender: String? { announce_bus_sender(raw).map { String(cString: $0) } }
    var isMethodCall: Bool { announce_bus_is_method_call(raw) != 0 }

    // MARK: writing

    func append(_ value: BusValue) throws(AnnounceError) {
        switch value {
        case .string(let text): try check(announce_bus_append_text(raw, CChar(UInt8(ascii: "s")), text))
        case .objectPath(let path): try check(announce_bus_append_text(raw, CChar(UInt8(ascii: "o")), path))
        case .bool(let flag): try check(announce_bus_append_bool(raw, flag ? 1 : 0))
        case .int64(let number): try check(announce_bus_append_int64(raw, number))
        case .double(let number): try check(announce_bus_append_double(raw, number))
        case .strings(let texts):
            try open("a", "s")
            for text in texts { try append(.string(text)) }
            try close()
        case .dictionary(let entries):
            try open("a", "{sv}")
            for (key, entry) in entries {
                try open("e", "sv")
                try append(.string(key))
                try appendVariant(entry)
                try close()
            }
            try close()
        }
    }

    func appendVariant(_ value: BusValue) throws(AnnounceError) {
        try open("v", value.signature)
        try append(value)
        try close()
    }

    func open(_ type: Character, _ contents: String) throws(AnnounceError) {
        try check(announce_bus_open_container(raw, CChar(type.asciiValue!), contents))
    }

    func close() throws(AnnounceError) { try check(announce_bus_close_container(raw)) }

    // MARK: reading

    func readString() throws(AnnounceError) -> String { try readText("s") }

    private func readText(_ type: Character) throws(AnnounceError) -> String {
        var value: UnsafePointer<CChar>?
        try check(announce_bus_read_text(raw, CChar(type.asciiValue!), &value))
        return value.map { String(cString: $0) } ?? ""
    }

    /// A variant holding a string; nil when it holds something else (skipped).
    func readStringVariant() throws(AnnounceError) -> String? {
        guard try peek()?.contents == "s" else {
            try skip("v")
            return nil
        }
        try check(announce_bus_enter(raw, CChar(UInt8(ascii: "v")), "s"))
        defer { _ = announce_bus_exit(raw) }
        return try readString()
    }

    /// The next value's type and contents; nil at the end of the current container.
    func peek() throws(AnnounceError) -> (type: Character, contents: String?)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let result = announce_bus_peek(raw, &type, &contents)
        try check(result)
        guard result > 0 else { return nil }
        return (Character(UnicodeScalar(UInt8(bitPattern: type))), contents.map { String(cString: $0) })
    }

    func enter(_ type: Character, _ contents: String) throws(AnnounceError) {
        try check(announce_bus_enter(raw, CChar(type.asciiValue!), contents))
    }

    func exit() throws(AnnounceError) { try check(announce_bus_exit(raw)) }
    func skip(_ types: String) throws(AnnounceError) { try check(announce_bus_skip(raw, types)) }

    /// An a{sv} of strings-only interest: each key with its value when that is a string.
    func readStringDictionary() throws(AnnounceError) -> [String: String?] {
        var entries: [String: String?] = [:]
        try enter("a", "{sv}")
        while try peek() != nil {
            try enter("e", "sv")
            let key = try readString()
            entries[key] = try readStringVariant()
            try exit()
        }
        try exit()
        return entries
    }
}

/// sd-bus's negative errno as announce's error.
@discardableResult
func check(_ result: Int32) throws(AnnounceError) -> Int32 {
    guard result >= 0 else { throw .unavailable("D-Bus: \(String(cString: strerror(-result)))") }
    return result
}
