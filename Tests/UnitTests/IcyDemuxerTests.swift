import AnnounceModel
import Testing

/// ICY metadata out of a stream's body: the audio comes out byte for byte, whatever the chunks.
@Suite struct IcyDemuxerTests {
    /// A body as an ICY server sends it: `audio` with a block after every `interval` bytes
    /// (`blocks[i]` after the i-th stretch; nil: a lone 0).
    static func body(audio: [UInt8], interval: Int, blocks: [String?]) -> [UInt8] {
        var body: [UInt8] = []
        var index = 0
        var offset = 0
        while offset < audio.count {
            let end = min(offset + interval, audio.count)
            body += audio[offset..<end]
            offset = end
            guard end % interval == 0 else { break }  // a block follows every whole stretch
            if let text = index < blocks.count ? blocks[index] : nil {
                var bytes = Array(text.utf8)
                bytes += [UInt8](repeating: 0, count: (16 - bytes.count % 16) % 16)
                body += [UInt8(bytes.count / 16)] + bytes
            } else {
                body.append(0)
            }
            index += 1
        }
        return body
    }

    /// Feeds `body` in chunks of `chunk` bytes; the audio out and the titles seen, in order.
    static func demux(_ body: [UInt8], interval: Int, chunk: Int) -> (audio: [UInt8], titles: [String?]) {
        var demuxer = IcyDemuxer(interval: interval)
        var audio: [UInt8] = []
        var titles: [String?] = []
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunk, body.count)
            body[offset..<end].withUnsafeBytes { bytes in
                demuxer.feed(bytes) { (piece: IcyDemuxer.Piece) in
                    switch piece {
                    case .audio(let bytes): audio += bytes
                    case .title(let title): titles.append(title)
                    }
                }
            }
            offset = end
        }
        return (audio, titles)
    }

    static let audio = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

    @Test(
        "metadata is taken out wherever the chunks split it, a block or its length byte too",
        arguments: [1, 2, 3, 15, 16, 17, 100, 999, 1000, 1001, 5000, 100_000])
    func splitAnywhere(chunk: Int) {
        let blocks: [String?] = [
            "StreamTitle='One';", nil, "StreamTitle='Two';StreamUrl='http://x';",
            "StreamTitle='Two';StreamUrl='http://x';"
        ]
        let body = Self.body(audio: Self.audio, interval: 1000, blocks: blocks)
        #expect(body.count > Self.audio.count + 4)
        let (audio, titles) = Self.demux(body, interval: 1000, chunk: chunk)
        #expect(audio == Self.audio)
        #expect(titles == ["One", "Two"])
    }

    @Test func aLengthOfZeroIsNoBlockAndLeavesTheTitle() {
        let body = Self.body(audio: Self.audio, interval: 700, blocks: ["StreamTitle='Kept';", nil, nil, nil])
        let (audio, titles) = Self.demux(body, interval: 700, chunk: 333)
        #expect(audio == Self.audio && titles == ["Kept"])
    }

    @Test func anEmptyTitleClearsIt() {
        let body = Self.body(audio: Self.audio, interval: 1000, blocks: ["StreamTitle='A';", "StreamTitle='';"])
        #expect(Self.demux(body, interval: 1000, chunk: 64).titles == ["A", nil])
    }

    @Test func garbageInABlockGivesNoTitleAndKeepsTheAudio() {
        var garbage = "\u{1}\u{2}\u{FF}not a title at all"
        garbage += String(repeating: "x", count: 40)
        let body = Self.body(audio: Self.audio, interval: 1000, blocks: [garbage, "StreamTitle='After';"])
        let (audio, titles) = Self.demux(body, interval: 1000, chunk: 77)
        #expect(audio == Self.audio && titles == ["After"])
    }

    @Test func titlesKeepApostrophesAndLoseControlCharacters() {
        func title(_ text: String) -> String? { IcyDemuxer.streamTitle(in: Array(text.utf8) + [0, 0]) }
        #expect(title("StreamTitle='Don't Stop - Fleetwood Mac';StreamUrl='';") == "Don't Stop - Fleetwood Mac")
        #expect(title("StreamTitle='No end quote") == "No end quote")
        #expect(title("StreamTitle='Evil \u{1B}[2J\ttitle\r\n';") == "Evil [2J title")
        #expect(title("StreamUrl='x';") == nil)
        // Not UTF-8: read as Latin-1.
        #expect(IcyDemuxer.streamTitle(in: Array("StreamTitle='Caf".utf8) + [0xE9] + Array("';".utf8)) == "Café")
        let long = IcyDemuxer.streamTitle(in: Array(("StreamTitle='" + String(repeating: "a", count: 500) + "';").utf8))
        #expect(long?.count == IcyDemuxer.maxTitleCharacters)
    }

    @Test func theHeaderValueMakesADemuxerOnlyWhenItIsACount() {
        #expect(IcyDemuxer(header: "16000")?.interval == 16000)
        #expect(IcyDemuxer(header: " 8192\r\n")?.interval == 8192)
        for bad in [nil, "", "0", "-5", "lots", "99999999999"] as [String?] {
            #expect(IcyDemuxer(header: bad) == nil, "\(bad ?? "nil")")
        }
    }
}
