import AnnounceModel
import AnnounceSystem

/// Names the audio codec of an ISO base media file (MP4, M4A, MOV), so that refusing it can
/// say what it is. Reads box headers only, and the `moov` box (at the start or the end).
enum MP4Probe {
    /// "AAC", "ALAC", …; nil when no audio sample entry is found.
    static func audioCodec(_ input: any ByteInput) throws(AnnounceError) -> String? {
        guard let movie = try movieBox(input) else { return nil }
        // Every sample description (`stsd`): version/flags, entry count, then the first
        // entry's size and its four-character codec.
        var index = 0
        let marker = Array("stsd".utf8)
        while index + 20 <= movie.count {
            if movie[index..<index + 4].elementsEqual(marker) {
                let fourcc = String(decoding: movie[index + 16..<index + 20], as: UTF8.self)
                if fourcc == "mp4a", let name = mpeg4AudioObjectType(movie[(index + 20)...]) { return name }
                if let name = audioCodecs[fourcc] { return name }
                index += 20
            } else {
                index += 1
            }
        }
        return nil
    }

    /// `mp4a` holds AAC or MPEG-1/2 audio (MP3): its `esds` box's ES descriptor says which,
    /// in the decoder configuration's object type (ISO/IEC 14496-1, 7.2.6.5).
    private static func mpeg4AudioObjectType(_ entry: ArraySlice<UInt8>) -> String? {
        let marker = Array("esds".utf8)
        guard let at = entry.indices.prefix(256).first(where: { entry[$0...].starts(with: marker) }) else { return nil }
        var i = at + 8  // "esds", version and flags
        func descriptor(_ tag: UInt8) -> Bool {  // a tag, then a length in 1 to 4 bytes of 7 bits
            guard i < entry.endIndex, entry[i] == tag else { return false }
            i += 1
            while i < entry.endIndex, entry[i] & 0x80 != 0 { i += 1 }
            i += 1
            return true
        }
        guard descriptor(0x03), i + 3 <= entry.endIndex else { return nil }
        let flags = entry[i + 2]
        i += 3  // ES_ID, flags
        if flags & 0x80 != 0 { i += 2 }  // depends on an ES
        if flags & 0x40 != 0, i < entry.endIndex { i += 1 + Int(entry[i]) }  // URL
        if flags & 0x20 != 0 { i += 2 }  // OCR stream
        guard descriptor(0x04), i < entry.endIndex else { return nil }
        return switch entry[i] {
        case 0x69, 0x6B: "MP3"  // MPEG-2 and MPEG-1 audio
        case 0x40, 0x66, 0x67, 0x68: "AAC"
        default: nil
        }
    }

    private static let audioCodecs = [
        "mp4a": "AAC", "alac": "ALAC", "ac-3": "AC-3", "ec-3": "E-AC-3", "Opus": "Opus", "fLaC": "FLAC",
        ".mp3": "MP3", "samr": "AMR", "sawb": "AMR-WB", "dtsc": "DTS", "lpcm": "PCM", "sowt": "PCM", "twos": "PCM"
    ]

    /// Largest `moov` read: real files' are well under this.
    private static let maxMovieBytes = 8 << 20

    private static func movieBox(_ input: any ByteInput) throws(AnnounceError) -> [UInt8]? {
        var offset: Int64 = 0
        for _ in 0..<64 {  // top-level boxes: a handful in any real file
            let header = try input.bytes(at: offset, count: 16)
            let got = header.count
            guard got >= 8 else { return nil }
            var size = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            var headerSize = 8
            if size == 1, got >= 16 {
                size = header[8..<16].reduce(0) { $0 << 8 | Int($1) }
                headerSize = 16
            }
            if type == "moov" {
                let length = min(size == 0 ? maxMovieBytes : size - headerSize, maxMovieBytes)
                guard length > 0 else { return nil }
                let movie = try input.bytes(at: offset + Int64(headerSize), count: length)
                return movie.isEmpty ? nil : movie
            }
            guard size >= headerSize else { return nil }  // 0 (to the end) or nonsense: no moov after it
            offset += Int64(size)
        }
        return nil
    }
}
