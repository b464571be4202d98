import AnnounceModel
import AnnounceSystem

/// What the first bytes of a file say it is. Extensions are never consulted.
public enum SniffedContainer: Equatable, Sendable {
    case wav, rf64, caf, aiff, aifc, flac, ogg
    /// FLAC in Ogg (libsndfile cannot read it; libFLAC can).
    case oggFLAC
    /// ID3v2-tagged or bare MPEG audio frames.
    case mpeg
    /// Another container libsndfile reads (RIFX, Wave64, AU, IRCAM, NIST, VOC, PAF, 8SVX, AVR, WVE…).
    case sndfile
    /// An ISO base media file (MP4, M4A, 3GP, MOV): its codec is named by `MP4Probe`.
    case mp4
    /// A format announce does not play, named: "AAC (ADTS)", "Monkey's Audio".
    case unsupported(String)
    /// A well-known format that is not audio at all, named: "an ELF executable", "a PDF document".
    case notAudio(String)
    case unknown

    /// Bytes `sniff` wants to see (tracker modules put their mark at 1080).
    public static let headerLength = 1084

    public static func sniff(_ bytes: [UInt8]) -> SniffedContainer {
        func ascii(_ offset: Int, _ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes.count >= offset + expected.count else { return false }
            return bytes[offset..<offset + expected.count].elementsEqual(expected)
        }
        func starts(_ prefix: [UInt8]) -> Bool { bytes.starts(with: prefix) }
        if ascii(0, "RIFF") && ascii(8, "WAVE") { return .wav }
        if (ascii(0, "RF64") || ascii(0, "BW64")) && ascii(8, "WAVE") { return .rf64 }
        if ascii(0, "caff") { return .caf }
        if ascii(0, "FORM") && ascii(8, "AIFF") { return .aiff }
        if ascii(0, "FORM") && ascii(8, "AIFC") { return .aifc }
        if ascii(0, "fLaC") { return .flac }
        if ascii(0, "OggS") { return oggCodec(bytes) }
        if ascii(0, "ID3") { return .mpeg }
        if ascii(4, "ftyp") || isQuickTimeWithoutType(bytes, ascii: ascii) { return .mp4 }
        if let named = unsupportedFormat(bytes, ascii: ascii, starts: starts) { return .unsupported(named) }
        if isSndFileContainer(ascii: ascii, starts: starts) { return .sndfile }
        if let named = nonAudioFormat(bytes, ascii: ascii, starts: starts) { return .notAudio(named) }
        // UTF-16 text's byte order mark reads as an MPEG frame header.
        if (starts([0xFF, 0xFE]) || starts([0xFE, 0xFF])) && looksLikeText(bytes) { return .unknown }
        if bytes.count >= 4 && isMPEGAudioFrameHeader(bytes[0], bytes[1], bytes[2]) { return .mpeg }
        return .unknown
    }

    /// Common formats that are not audio, by their magic numbers, so that a program or a
    /// document given by mistake is named rather than searched for audio.
    private static func nonAudioFormat(
        _ bytes: [UInt8], ascii: (Int, String) -> Bool,
        starts: ([UInt8]) -> Bool
    ) -> String? {
        if ascii(0, "\u{7F}ELF") {
            // e_type: relocatable 1, executable 2, shared object (also a PIE executable) 3, core 4.
            return switch bytes.count > 16 ? bytes[16] : 0 {
            case 1: "an ELF object file"
            case 4: "an ELF core dump"
            default: "an ELF executable"
            }
        }
        if ascii(0, "%PDF-") { return "a PDF document" }
        if ascii(0, "%!PS") { return "a PostScript document" }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "a ZIP archive" }
        if starts([0x1F, 0x8B]) { return "gzip-compressed data" }
        if ascii(0, "BZh") && bytes.count > 3 && (0x31...0x39).contains(bytes[3]) { return "bzip2-compressed data" }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "xz-compressed data" }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return "zstd-compressed data" }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "a 7-Zip archive" }
        if ascii(0, "Rar!\u{1A}\u{7}") { return "a RAR archive" }
        if ascii(257, "ustar") { return "a tar archive" }
        if ascii(0, "!<arch>\n") { return "an ar archive (or Debian package)" }
        if starts([0xED, 0xAB, 0xEE, 0xDB]) { return "an RPM package" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "a PNG image" }
        if starts([0xFF, 0xD8, 0xFF]) { return "a JPEG image" }
        if ascii(0, "GIF87a") || ascii(0, "GIF89a") { return "a GIF image" }
        if ascii(0, "RIFF") && ascii(8, "WEBP") { return "a WebP image" }
        if ascii(0, "II*\u{0}") || ascii(0, "MM\u{0}*") { return "a TIFF image" }
        if ascii(0, "SQLite format 3\u{0}") { return "an SQLite database" }
        if ascii(0, "MZ") { return "a Windows executable" }
        if [[0xFE, 0xED, 0xFA, 0xCE], [0xFE, 0xED, 0xFA, 0xCF], [0xCE, 0xFA, 0xED, 0xFE], [0xCF, 0xFA, 0xED, 0xFE]]
            .contains(where: starts)
        {
            return "a Mach-O executable"
        }
        if ascii(0, "\u{0}asm") { return "a WebAssembly module" }
        return nil
    }

    /// Containers libsndfile reads, by their magic numbers (libsndfile itself tells the rest).
    private static func isSndFileContainer(ascii: (Int, String) -> Bool, starts: ([UInt8]) -> Bool) -> Bool {
        (ascii(0, "RIFX") && ascii(8, "WAVE"))
            || starts([0x72, 0x69, 0x66, 0x66, 0x2E, 0x91, 0xCF, 0x11])  // Wave64: "riff" GUID
            || ascii(0, ".snd") || ascii(0, "dns.")  // Sun/NeXT AU, big and little endian
            || starts([0x64, 0xA3, 0x01, 0x00]) || starts([0x64, 0xA3, 0x02, 0x00]) || starts([0x64, 0xA3, 0x03, 0x00])
            || starts([0x64, 0xA3, 0x04, 0x00]) || starts([0x00, 0x01, 0xA3, 0x64]) || starts([0x00, 0x02, 0xA3, 0x64])
            || starts([0x00, 0x03, 0xA3, 0x64]) || starts([0x00, 0x04, 0xA3, 0x64])  // IRCAM
            || ascii(0, "NIST_1A") || ascii(0, "Creative Voice File")
            || ascii(0, " paf") || ascii(0, "fap ")
            || (ascii(0, "FORM") && (ascii(8, "8SVX") || ascii(8, "16SV")))
            || ascii(0, "2BIT")  // AVR
            || ascii(0, "ALawSoundFile")  // Psion WVE
    }

    /// Formats recognised by their bytes that announce does not decode.
    private static func unsupportedFormat(
        _ bytes: [UInt8], ascii: (Int, String) -> Bool,
        starts: ([UInt8]) -> Bool
    ) -> String? {
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 { return "AAC (ADTS)" }
        if ascii(0, "ADIF") { return "AAC (ADIF)" }
        if starts([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) { return "WMA/ASF" }
        if ascii(0, "MAC ") { return "Monkey's Audio (APE)" }
        if ascii(0, "wvpk") { return "WavPack" }
        if ascii(0, "TTA1") { return "TTA" }
        if ascii(0, "tBaK") { return "TAK" }
        if ascii(0, "OFR ") { return "OptimFROG" }
        if ascii(0, "MPCK") || ascii(0, "MP+") { return "Musepack" }
        if starts([0x0B, 0x77]) {
            // bsid above 10 is Enhanced AC-3.
            return bytes.count > 5 && bytes[5] >> 3 > 10 ? "E-AC-3" : "AC-3"
        }
        if starts([0x7F, 0xFE, 0x80, 0x01]) || starts([0xFE, 0x7F, 0x01, 0x80]) || starts([0x1F, 0xFF, 0xE8, 0x00]) {
            return "DTS"
        }
        if ascii(0, "DSD ") { return "DSD (DSF)" }
        if ascii(0, "FRM8") { return "DSD (DSDIFF)" }
        if ascii(0, "MThd") || (ascii(0, "RIFF") && ascii(8, "RMID")) { return "MIDI" }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "Matroska/WebM" }
        if ascii(0, "#!AMR") { return "AMR" }
        if ascii(0, "RIFF") && ascii(8, "AVI ") { return "AVI" }
        if ascii(0, "Extended Module: ") { return "XM tracker module" }
        if ascii(44, "SCRM") { return "S3M tracker module" }
        if ascii(0, "IMPM") { return "IT tracker module" }
        if ["M.K.", "M!K!", "FLT4", "FLT8", "4CHN", "6CHN", "8CHN"].contains(where: { ascii(1080, $0) }) {
            return "MOD tracker module"
        }
        return nil
    }

    /// An ISO base media file without the `ftyp` box (older QuickTime, and MP4 writers that put
    /// `moov` first): its first box is one of the top-level ones and its size fits. A size of
    /// 1 means a 64-bit size follows the type.
    private static func isQuickTimeWithoutType(_ bytes: [UInt8], ascii: (Int, String) -> Bool) -> Bool {
        guard bytes.count >= 16, ["moov", "mdat", "wide", "free", "skip", "pnot"].contains(where: { ascii(4, $0) })
        else { return false }
        let size = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        return size == 1 || size >= 8
    }

    /// Ogg Vorbis and Opus are libsndfile's, Ogg FLAC libFLAC's; other codecs in Ogg are named.
    private static func oggCodec(_ bytes: [UInt8]) -> SniffedContainer {
        // The first page's first packet starts after the 27-byte header and its segment table.
        guard bytes.count > 27 else { return .ogg }
        let start = 27 + Int(bytes[26])
        let packet = bytes.count > start ? Array(bytes[start..<min(bytes.count, start + 8)]) : []
        func packetStarts(_ prefix: [UInt8]) -> Bool { packet.starts(with: prefix) }
        if packetStarts([0x01] + Array("vorbis".utf8)) || packetStarts(Array("OpusHead".utf8)) { return .ogg }
        if packetStarts(Array("Speex   ".utf8)) { return .unsupported("Speex in Ogg") }
        if packetStarts([0x7F] + Array("FLAC".utf8)) { return .oggFLAC }
        if packetStarts([0x80] + Array("theora".utf8)) { return .unsupported("Theora video in Ogg") }
        return packet.isEmpty ? .ogg : .unsupported("this codec in Ogg")
    }

    /// An 11-bit frame sync with a valid version, layer, bitrate and sample rate.
    static func isMPEGAudioFrameHeader(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> Bool {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return false }
        let version = (b1 >> 3) & 0x3
        let layer = (b1 >> 1) & 0x3
        let bitrate = b2 >> 4
        let rate = (b2 >> 2) & 0x3
        return version != 0x1 && layer != 0 && bitrate != 0xF && rate != 0x3
    }

    /// Consecutive frames `mpegStreamStart` wants, all of one version, layer, sample rate and
    /// channel count.
    static let chainedFrames = 4

    /// Where MPEG audio starts in `bytes` (the first bytes of a file, junk or damage before
    /// the first frame, as ffmpeg and mpg123 skip it); nil when there is none. Strict, because
    /// every binary file has byte pairs that read as frame headers: `chainedFrames` frames
    /// must follow one another, and Layer I is looked for only at the start (machine code's
    /// jump tables are runs of FF FF xx xx, a chain of Layer I headers). Measured: no file in
    /// /usr/bin or /usr/lib passes.
    static func mpegStreamStart(_ bytes: [UInt8], isWholeFile: Bool = false) -> Int? {
        func frame(at i: Int) -> (length: Int, key: UInt32)? {
            mpegFrame(bytes, at: i).map { ($0.length, $0.key) }
        }
        var i = 0
        while i + 4 <= bytes.count {
            let isLayerI = i + 1 < bytes.count && bytes[i + 1] >> 1 & 3 == 3
            if bytes[i] == 0xFF, !isLayerI || i == 0, let first = frame(at: i) {
                var next = i + first.length
                var count = 1
                while count < chainedFrames, let following = frame(at: next), following.key == first.key {
                    next += following.length
                    count += 1
                }
                // A file shorter than the chain counts when its frames end exactly at its end.
                if count == chainedFrames || (isWholeFile && i == 0 && next == bytes.count) { return i }
            }
            i += 1
        }
        return nil
    }

    /// The MPEG audio frame whose header is at `i`: its length, what must stay the same from
    /// frame to frame, and its bitrate index (free format, without a length, is nil).
    static func mpegFrame(_ bytes: [UInt8], at i: Int) -> (length: Int, key: UInt32, bitrateIndex: Int)? {
        guard i + 4 <= bytes.count, isMPEGAudioFrameHeader(bytes[i], bytes[i + 1], bytes[i + 2]),
            bytes[i + 3] & 0x3 != 0x2
        else { return nil }  // emphasis 2 is reserved
        let version = Int(bytes[i + 1] >> 3) & 3
        let layer = Int(bytes[i + 1] >> 1) & 3
        let bitrateIndex = Int(bytes[i + 2] >> 4)
        let rateIndex = Int(bytes[i + 2] >> 2) & 3
        let padding = Int(bytes[i + 2] >> 1) & 1
        guard bitrateIndex != 0 else { return nil }  // free format: no length in the header
        let mpeg1 = version == 3
        let table: [Int] =
            switch (mpeg1, layer) {
            case (true, 3): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
            case (true, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
            case (true, _): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            case (false, 3): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
            case (false, _): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
            }
        let rate = [44100, 48000, 32000][rateIndex] >> (mpeg1 ? 0 : version == 2 ? 1 : 2)
        let bitrate = table[bitrateIndex] * 1000
        let length =
            switch layer {
            case 3: (12 * bitrate / rate + padding) * 4
            case 1 where !mpeg1: 72 * bitrate / rate + padding
            default: 144 * bitrate / rate + padding
            }
        // Version, layer, sample rate and mono or not stay the same from frame to frame (LAME's
        // Info frame says stereo before joint-stereo frames).
        let mono: UInt32 = bytes[i + 3] & 0xC0 == 0xC0 ? 1 : 0
        let key = UInt32(bytes[i + 1] & 0xFE) << 16 | UInt32(bytes[i + 2] & 0x0C) << 8 | mono
        return (length, key, bitrateIndex)
    }

    /// True when `bytes` read as text: no NUL or other control bytes besides tab, line feed,
    /// carriage return and form feed (UTF-8's high bytes pass), in UTF-8 or in UTF-16 after its
    /// byte order mark. A binary file is never text.
    static func looksLikeText(_ bytes: [UInt8]) -> Bool {
        func isText(_ unit: UInt16) -> Bool { unit >= 0x20 && unit != 0x7F || [0x09, 0x0A, 0x0C, 0x0D].contains(unit) }
        let bigEndian = bytes.starts(with: [0xFE, 0xFF])
        if bigEndian || bytes.starts(with: [0xFF, 0xFE]) {
            let units = stride(from: 2, to: bytes.count - 1, by: 2).map { (i: Int) -> UInt16 in
                let high = UInt16(bytes[bigEndian ? i : i + 1])
                let low = UInt16(bytes[bigEndian ? i + 1 : i])
                return high << 8 | low
            }
            return !units.isEmpty && units.allSatisfy(isText)
        }
        return !bytes.isEmpty && bytes.allSatisfy { isText(UInt16($0)) }
    }
}

extension SniffedContainer {
    /// The length of the ID3v2 tag `header` starts with (its synchsafe size, the 10-byte header
    /// and a footer when the flag says so); 0 when it starts with none.
    static func id3v2TagLength(_ header: [UInt8]) -> Int {
        guard header.count >= 10, header.starts(with: Array("ID3".utf8)) else { return 0 }
        return 10 + header[6..<10].reduce(0) { $0 << 7 | Int($1 & 0x7F) } + (header[5] & 0x10 != 0 ? 10 : 0)
    }
}
