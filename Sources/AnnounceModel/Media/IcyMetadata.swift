/// SHOUTcast/Icecast in-band metadata (ICY), taken out of a stream's body: after every
/// `interval` bytes of audio (the response's `icy-metaint`) comes one length byte N, then N × 16
/// bytes of text, `StreamTitle='Artist - Title';StreamUrl='…';` padded with NULs (N = 0: no
/// block). Bytes go in as they arrive, split anywhere; the audio comes out in order, uncopied.
/// Pure: the network thread feeds it (AnnounceNetwork/StreamReceiver.swift).
public struct IcyDemuxer: Sendable {
    /// Audio bytes between two metadata blocks.
    public let interval: Int
    /// The latest `StreamTitle`; nil before one, or when it was empty.
    public private(set) var title: String?

    private enum Phase: Equatable, Sendable {
        case audio(left: Int)
        case lengthByte
        case block(left: Int)
    }
    private var phase: Phase
    /// The block being read, and the last one read: a block repeated unchanged is not parsed again.
    private var block: [UInt8] = []
    private var lastBlock: [UInt8] = []

    /// The longest block: 255 × 16 bytes.
    public static let maxBlockBytes = 255 * 16
    /// `icy-metaint` values taken; any other is ignored (no metadata is taken out).
    public static let intervals = 1...(1 << 24)

    public init(interval: Int) {
        self.interval = interval
        phase = .audio(left: interval)
        // Both reserved once: a stream runs for hours without an allocation here.
        block.reserveCapacity(Self.maxBlockBytes)
        lastBlock.reserveCapacity(Self.maxBlockBytes)
    }

    /// `icy-metaint`'s value as a demuxer; nil when absent or not a positive count in `intervals`.
    public init?(header value: String?) {
        guard let value, let interval = Int(value.trimming(" \t\r\n")), Self.intervals.contains(interval) else {
            return nil
        }
        self.init(interval: interval)
    }

    /// What comes out, in order.
    public enum Piece {
        /// Audio bytes, in the caller's memory.
        case audio(UnsafeRawBufferPointer)
        /// A block changed the title (nil: it is empty now).
        case title(String?)
    }

    /// Takes `bytes` in and passes the audio among them to `emit`, in a few spans, each title
    /// change where it came.
    public mutating func feed<Failure: Error>(
        _ bytes: UnsafeRawBufferPointer,
        emit: (Piece) throws(Failure) -> Void
    ) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            switch phase {
            case .audio(let left):
                let count = min(left, bytes.count - offset)
                try emit(.audio(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])))
                offset += count
                phase = count == left ? .lengthByte : .audio(left: left - count)
            case .lengthByte:
                let length = Int(bytes[offset]) * 16
                offset += 1
                block.removeAll(keepingCapacity: true)
                phase = length == 0 ? .audio(left: interval) : .block(left: length)
            case .block(let left):
                let count = min(left, bytes.count - offset)
                block.append(contentsOf: bytes[offset..<offset + count])
                offset += count
                if count < left {
                    phase = .block(left: left - count)
                } else {
                    phase = .audio(left: interval)
                    if block != lastBlock {
                        swap(&block, &lastBlock)
                        let title = Self.streamTitle(in: lastBlock)
                        if title != self.title {
                            self.title = title
                            try emit(.title(title))
                        }
                    }
                }
            }
        }
    }

    /// The `StreamTitle` of one block's text, as a line fit for a terminal; nil when there is
    /// none or it is empty. A block that is not text (garbage) has none.
    public static func streamTitle(in block: [UInt8]) -> String? {
        let key = Array("StreamTitle='".utf8)
        guard let start = firstIndex(of: key, in: block[...]) else { return nil }
        let value = block[(start + key.count)...].prefix { $0 != 0 }
        // The value ends at `';` (a title may hold an apostrophe), else at the last quote.
        let end =
            firstIndex(of: Array("';".utf8), in: value) ?? value.lastIndex(of: UInt8(ascii: "'")) ?? value.endIndex
        return displayLine(value[value.startIndex..<end])
    }

    /// Text from a stream (ICY titles are UTF-8 or Latin-1; Vorbis comments UTF-8) as one
    /// line safe for a terminal: control characters become spaces, runs of space one, at most
    /// `maxTitleCharacters`. Nil when nothing is left.
    public static func displayLine(_ bytes: some Collection<UInt8>) -> String? {
        let text =
            String(validating: bytes, as: UTF8.self)
            ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        var line = ""
        for scalar in text.unicodeScalars {
            let control =
                scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || scalar.properties.generalCategory == .format && scalar.value != 0x200D
            let space = control || scalar.properties.isWhitespace
            if space {
                if !line.isEmpty && line.last != " " { line.append(" ") }
            } else {
                line.unicodeScalars.append(scalar)
            }
            if line.count >= maxTitleCharacters { break }
        }
        while line.last == " " { line.removeLast() }
        return line.isEmpty ? nil : line
    }

    /// The longest title kept, in characters.
    public static let maxTitleCharacters = 200

    private static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
