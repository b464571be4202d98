import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// The arguments as the kernel passed them: bytes. `CommandLine.arguments` (and so every word
/// the parser gives) decodes argv lossily, each byte that is not UTF-8 as U+FFFD; a file name or
/// the text of `say` needs the bytes themselves, so parsed words are mapped back to argv here.
enum RawArguments {
    /// Each word's own argv bytes. Words are matched from the last to the last arguments whose
    /// decoding they are, in order: options and their values in between are passed over, and two
    /// names that decode alike (`caf\xe9`, `caf\xff`) keep their own bytes. A word no argument
    /// decodes to (none, unless the parser made it) is its UTF-8.
    static func bytes(of words: [String]) -> [[UInt8]] {
        var raw: [[UInt8]] = []
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            raw.append(
                Array(
                    UnsafeBufferPointer(
                        start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))))
        }
        var bytes: [[UInt8]] = []
        var next = raw.count - 1
        for word in words.reversed() {
            while next >= 0 && String(decoding: raw[next], as: UTF8.self) != word { next -= 1 }
            bytes.insert(next >= 0 ? raw[next] : Array(word.utf8), at: 0)
            next -= 1
        }
        return bytes
    }

    /// File arguments by their bytes: opened by these, shown as the words are.
    static func fileNames(_ words: [String]) -> [FileName] {
        bytes(of: words).map { FileName(bytes: $0) }
    }
}

/// The working directory, by its bytes (it need not be UTF-8 either); nil when it is gone.
func workingDirectory() -> FileName? {
    guard let cwd = getcwd(nil, 0) else { return nil }
    defer { free(cwd) }
    return FileName(
        bytes: UnsafeBufferPointer(start: UnsafeRawPointer(cwd).assumingMemoryBound(to: UInt8.self), count: strlen(cwd))
    )
}

/// `file` made absolute against the working directory, as bytes: the daemon has its own.
func absoluteFile(_ file: FileName) -> FileName {
    guard !file.isAbsolute, let directory = workingDirectory() else { return file }
    return file.absolute(against: directory)
}
