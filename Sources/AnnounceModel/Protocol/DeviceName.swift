/// ALSA PCM names as requests carry them: string rules only, so client and daemon share them.
public enum DeviceName {
    /// Why `name` cannot be a request's device: empty, longer than `Limits.maxDeviceNameBytes`,
    /// or a `file:` device whose FILE is relative (the daemon's directory is not the caller's).
    public static func problem(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > Limits.maxDeviceNameBytes { return "device name is empty or too long" }
        guard let file = fileArgument(name) else { return nil }
        return file.hasPrefix("/") ? nil : "device \(name): FILE must be an absolute path"
    }

    /// The FILE of a `file:` name (named or first positional), or nil for other names.
    public static func fileArgument(_ name: String) -> String? {
        guard name.hasPrefix("file:") else { return nil }
        let arguments = arguments(of: name)
        return (arguments.first { $0.name == "FILE" } ?? arguments.first { $0.name == nil })?.value
    }

    /// The arguments after `NAME:`, `KEY=VALUE` or positional, values optionally quoted; none without a colon.
    public static func arguments(of name: String) -> [(name: String?, value: String)] {
        guard let colon = name.firstIndex(of: ":") else { return [] }
        var pieces: [String] = [], current = "", quote: Character?
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
