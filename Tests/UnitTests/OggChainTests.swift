import AnnounceModel
import Testing

/// A chained Ogg stream cut where each link begins, with every byte passed on in order.
@Suite struct OggChainTests {
    /// An Ogg page (its CRC left 0: the chain does not check it).
    static func page(beginsStream: Bool = false, endsStream: Bool = false, serial: UInt32, body: [UInt8]) -> [UInt8] {
        var lacing: [UInt8] = []
        var left = body.count
        repeat {
            lacing.append(UInt8(min(left, 255)))
            left -= min(left, 255)
        } while left > 0 || lacing.last == 255
        var header = Array("OggS".utf8) + [0, (beginsStream ? 2 : 0) | (endsStream ? 4 : 0)]
        header += [UInt8](repeating: 0, count: 8)  // granule position
        header += (0..<4).map { UInt8(truncatingIfNeeded: serial >> (8 * $0)) }
        header += [UInt8](repeating: 0, count: 8)  // sequence number and CRC
        return header + [UInt8(lacing.count)] + lacing + body
    }

    /// A Vorbis comment header packet with `tags`.
    static func comments(_ tags: [String]) -> [UInt8] {
        func number(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let vendor = Array("test vendor".utf8)
        var packet = [3] + Array("vorbis".utf8) + number(vendor.count) + vendor + number(tags.count)
        for tag in tags { packet += number(tag.utf8.count) + Array(tag.utf8) }
        return packet + [1]
    }

    /// One link: identification page, comments, `pages` pages of audio-like bytes, the last marked EOS.
    static func link(serial: UInt32, tags: [String], pages: Int) -> [UInt8] {
        var bytes = page(
            beginsStream: true, serial: serial, body: [1] + Array("vorbis".utf8) + [UInt8](repeating: 9, count: 23))
        bytes += page(serial: serial, body: comments(tags))
        for index in 0..<pages {
            bytes += page(
                endsStream: index == pages - 1, serial: serial,
                body: (0..<(300 + index * 97)).map { UInt8(truncatingIfNeeded: $0) })
        }
        return bytes
    }

    enum Seen: Equatable { case newStream(at: Int), title(String?) }

    /// Feeds `bytes` in chunks; what came out, and the news with where in the output it came.
    static func follow(_ bytes: [UInt8], chunk: Int) -> (bytes: [UInt8], seen: [Seen]) {
        var chain = OggChain()
        var out: [UInt8] = []
        var seen: [Seen] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            bytes[offset..<end].withUnsafeBytes { piece in
                chain.feed(piece) { (news: OggChain.Piece) in
                    switch news {
                    case .bytes(let bytes): out += bytes
                    case .newStream: seen.append(.newStream(at: out.count))
                    case .title(let title): seen.append(.title(title))
                    }
                }
            }
            offset = end
        }
        return (out, seen)
    }

    @Test(
        "each new link is announced at its first page, its comments give the title",
        arguments: [1, 2, 5, 27, 28, 100, 1000, 1 << 20])
    func links(chunk: Int) {
        let first = Self.link(serial: 1, tags: ["ARTIST=Someone", "title=A Song"], pages: 3)
        let second = Self.link(serial: 2, tags: ["TITLE=Only A Title"], pages: 2)
        let third = Self.link(serial: 1, tags: ["DATE=2024"], pages: 1)
        let (bytes, seen) = Self.follow(first + second + third, chunk: chunk)
        #expect(bytes == first + second + third)
        #expect(
            seen == [
                .title("Someone - A Song"), .newStream(at: first.count), .title("Only A Title"),
                .newStream(at: first.count + second.count), .title(nil)
            ])
    }

    @Test func streamsThatBeginTogetherAreOneLink() {
        // Two logical streams multiplexed: both BOS pages come first.
        let bytes =
            Self.page(beginsStream: true, serial: 1, body: [1, 2, 3])
            + Self.page(beginsStream: true, serial: 2, body: [4])
            + Self.page(serial: 1, body: [5, 6]) + Self.page(serial: 2, body: [7])
        let (out, seen) = Self.follow(bytes, chunk: 3)
        #expect(out == bytes)
        #expect(!seen.contains { if case .newStream = $0 { true } else { false } })
    }

    @Test("bytes that are no page pass through, and the next page is still found", arguments: [1, 4, 13, 4096])
    func garbage(chunk: Int) {
        let junk = Array("OgOggxOggSjunk".utf8) + [0xFF, 0x4F]
        let first = Self.link(serial: 5, tags: [], pages: 1)
        let second = Self.link(serial: 6, tags: ["ARTIST=Band"], pages: 1)
        let input = junk + first + junk + second
        let (bytes, seen) = Self.follow(input, chunk: chunk)
        #expect(bytes == input)
        #expect(seen == [.title(nil), .newStream(at: junk.count + first.count + junk.count), .title("Band")])
    }

    @Test func aCommentHeaderCutShortGivesWhatItHolds() {
        var packet = Self.comments(["ARTIST=Cut", "TITLE=" + String(repeating: "x", count: 100)])
        packet.removeLast(60)
        let tags = OggChain.comments(packet) ?? []
        #expect(tags.map(\.key) == ["ARTIST"])
        #expect(OggChain.comments(Array("OpusHead".utf8)) == nil)
    }
}
