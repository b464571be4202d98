/// What the first bytes of a file say it is. Extensions are never consulted.
public enum SniffedContainer: Equatable, Sendable {
    case wav, rf64, caf, aiff, aifc, flac, ogg
    /// ID3v2-tagged or bare MPEG audio frames.
    case mpeg
    case unknown

    /// Bytes `sniff` wants to see.
    public static let headerLength = 12

    public static func sniff(_ bytes: [UInt8]) -> SniffedContainer {
        func ascii(_ offset: Int, _ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes.count >= offset + expected.count else { return false }
            return Array(bytes[offset..<offset + expected.count]) == expected
        }
        if ascii(0, "RIFF") && ascii(8, "WAVE") { return .wav }
        if (ascii(0, "RF64") || ascii(0, "BW64")) && ascii(8, "WAVE") { return .rf64 }
        if ascii(0, "caff") { return .caf }
        if ascii(0, "FORM") && ascii(8, "AIFF") { return .aiff }
        if ascii(0, "FORM") && ascii(8, "AIFC") { return .aifc }
        if ascii(0, "fLaC") { return .flac }
        if ascii(0, "OggS") { return .ogg }
        if ascii(0, "ID3") { return .mpeg }
        if bytes.count >= 4 && isMPEGAudioFrameHeader(bytes[0], bytes[1], bytes[2]) { return .mpeg }
        return .unknown
    }

    /// An 11-bit frame sync with a valid version, layer, bitrate and sample rate.
    static func isMPEGAudioFrameHeader(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> Bool {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return false }
        let version = (b1 >> 3) & 0x3, layer = (b1 >> 1) & 0x3
        let bitrate = b2 >> 4, rate = (b2 >> 2) & 0x3
        return version != 0x1 && layer != 0 && bitrate != 0xF && rate != 0x3
    }
}
