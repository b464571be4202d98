/// Follows an Ogg stream's pages as its bytes pass, to find where a chained stream begins: a
/// page that starts a logical stream (BOS) after pages that did not. Icecast sends a new one
/// per track, with its own headers; a decoder that reached the end of one (libsndfile does
/// not go on to the next) is started again there. The comment header that follows the new
/// headers gives the track's title (Vorbis `TITLE`/`ARTIST`, and Opus's, alike). Pure: the
/// network thread feeds it (AnnounceNetwork/StreamReceiver.swift); held back are only a page
/// header's bytes (at most 282), until it is whole.
public struct OggChain: Sendable {
    /// What passes, in order.
    public enum Piece {
        /// Bytes of the stream, the caller's memory or the chain's own (a page header).
        case bytes(UnsafeRawBufferPointer)
        /// A new logical stream starts with the bytes that follow.
        case newStream
        /// A comment header gave this title (nil: none in it).
        case title(String?)
    }

    private enum Phase: Sendable {
        /// Looking for "OggS": `matched` bytes of it are held.
        case seeking(matched: Int)
        /// The fixed 27 bytes of a page header, then its segment table.
        case header
        case body(left: Int)
    }
    private var phase = Phase.seeking(matched: 0)
    private var header: [UInt8] = []
    /// A page that did not start a stream went by: the next BOS page starts a new link.
    private var sawData = false
    /// The body of a comment header being gathered (the page after a link's first pages).
    private var comment: [UInt8] = []
    private var gathersComment = false
    private var commentLooked = true

    private static let capture = Array("OggS".utf8)
    /// A page header's fixed part; then up to 255 lacing values.
    private static let fixedHeader = 27
    /// Of a comment page, this much is read: titles come first, pictures later.
    public static let maxCommentBytes = 16384

    public init() {
        header.reserveCapacity(Self.fixedHeader + 255)
        comment.reserveCapacity(Self.maxCommentBytes)
    }

    /// Takes `bytes` in and passes them to `emit` with the news found among them.
    public mutating func feed<Failure: Error>(_ bytes: UnsafeRawBufferPointer, emit: (Piece) throws(Failure) -> Void)
        throws(Failure)
    {
        var offset = 0
        while offset < bytes.count {
            switch phase {
            case .seeking(let matched):
                let byte = bytes[offset]
                if byte == Self.capture[matched] {
                    header.append(byte)
                    offset += 1
                    phase = matched + 1 == Self.capture.count ? .header : .seeking(matched: matched + 1)
                } else if matched > 0 {
                    // Not a page: what was held goes on as it came; this byte may begin one.
                    try flushHeader(emit)
                    phase = .seeking(matched: 0)
                } else {
                    try emit(.bytes(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 1])))
                    offset += 1
                }
            case .header:
                let wanted = header.count < Self.fixedHeader ? Self.fixedHeader : Self.fixedHeader + Int(header[26])
                let count = min(wanted - header.count, bytes.count - offset)
                header.append(contentsOf: bytes[offset..<offset + count])
                offset += count
                if header.count < Self.fixedHeader || header.count < Self.fixedHeader + Int(header[26]) { continue }
                try pageHeaderComplete(emit)
            case .body(let left):
                let count = min(left, bytes.count - offset)
                let span = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
                if gathersComment { comment.append(contentsOf: span.prefix(Self.maxCommentBytes - comment.count)) }
                try emit(.bytes(span))
                offset += count
                if count == left { try pageEnded(emit) } else { phase = .body(left: left - count) }
            }
        }
    }

    private mutating func pageHeaderComplete<Failure: Error>(_ emit: (Piece) throws(Failure) -> Void) throws(Failure) {
        guard header[4] == 0 else {  // version 0 is the only one: "OggS" by chance
            // Its first byte goes on as it came; a page may begin in the rest.
            let held = header
            header.removeAll(keepingCapacity: true)
            phase = .seeking(matched: 0)
            let resynced = held.withUnsafeBytes { bytes in
                Result { () throws(Failure) in
                    try emit(.bytes(UnsafeRawBufferPointer(rebasing: bytes[..<1])))
                    try feed(UnsafeRawBufferPointer(rebasing: bytes[1...]), emit: emit)
                }
            }
            return try resynced.get()
        }
        let beginsStream = header[5] & 0x02 != 0
        if beginsStream {
            if sawData { try emit(.newStream) }
            sawData = false
            commentLooked = false
        } else {
            sawData = true
        }
        // The first page after a link's opening ones may hold its comment header.
        gathersComment = !beginsStream && !commentLooked
        commentLooked = commentLooked || gathersComment
        comment.removeAll(keepingCapacity: true)
        let length = header[Self.fixedHeader...].reduce(0) { $0 + Int($1) }
        try flushHeader(emit)
        if length == 0 { try pageEnded(emit) } else { phase = .body(left: length) }
    }

    private mutating func pageEnded<Failure: Error>(_ emit: (Piece) throws(Failure) -> Void) throws(Failure) {
        phase = .seeking(matched: 0)
        guard gathersComment else { return }
        gathersComment = false
        if let tags = Self.comments(comment) { try emit(.title(Self.title(from: tags))) }
    }

    private mutating func flushHeader<Failure: Error>(_ emit: (Piece) throws(Failure) -> Void) throws(Failure) {
        guard !header.isEmpty else { return }
        let emitted = header.withUnsafeBytes { bytes in Result { () throws(Failure) in try emit(.bytes(bytes)) } }
        try emitted.get()
        header.removeAll(keepingCapacity: true)
    }

    /// The `KEY=value` comments of a Vorbis (`\u{3}vorbis`) or Opus (`OpusTags`) comment header,
    /// as far as `packet` holds them; nil when it is neither.
    public static func comments(_ packet: [UInt8]) -> [(key: String, value: ArraySlice<UInt8>)]? {
        let vorbis = [3] + Array("vorbis".utf8)
        let opus = Array("OpusTags".utf8)
        var at: Int
        if packet.starts(with: vorbis) {
            at = vorbis.count
        } else if packet.starts(with: opus) {
            at = opus.count
        } else {
            return nil
        }
        func number() -> Int? {
            guard at + 4 <= packet.count else { return nil }
            defer { at += 4 }
            return packet[at..<at + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        guard let vendor = number(), vendor <= packet.count - at else { return [] }
        at += vendor
        guard let count = number() else { return [] }
        var tags: [(key: String, value: ArraySlice<UInt8>)] = []
        for _ in 0..<min(count, 1000) {
            guard let length = number(), length <= packet.count - at else { break }
            let entry = packet[at..<at + length]
            at += length
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            tags.append((String(decoding: entry[..<equals], as: UTF8.self).uppercased(), entry[(equals + 1)...]))
        }
        return tags
    }

    /// `ARTIST - TITLE`, or either alone; nil with neither.
    public static func title(from tags: [(key: String, value: ArraySlice<UInt8>)]) -> String? {
        func tag(_ key: String) -> String? { tags.first { $0.key == key }.flatMap { IcyDemuxer.displayLine($0.value) } }
        switch (tag("ARTIST"), tag("TITLE")) {
        case (let artist?, let title?): return IcyDemuxer.displayLine(Array("\(artist) - \(title)".utf8))
        case (let artist, let title): return title ?? artist
        }
    }
}
