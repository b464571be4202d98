/// Text made safe for one line of a log: a file or device name can hold newlines and
/// control characters, and written raw it could forge or garble log lines. The one rule:
/// a backslash becomes `\\`, newline, tab and carriage return `\n`, `\t`, `\r`, every
/// other control character (C0, DEL, C1) `\xNN` (`\u{NNNN}` above 0xFF); the rest stays.
public func escapedForLog(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var escaped = ""
    escaped.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        case "\t": escaped += "\\t"
        case "\r": escaped += "\\r"
        case _ where needsEscape(scalar):
            let hex = String(scalar.value, radix: 16)
            escaped += scalar.value <= 0xFF ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u{\(hex)}"
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    return escaped
}

/// Control characters, the backslash (so an escape in a name cannot pass for ours), and
/// the Unicode line and paragraph separators (some viewers break lines there).
private func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\"
        || scalar.value == 0x2028 || scalar.value == 0x2029
}
