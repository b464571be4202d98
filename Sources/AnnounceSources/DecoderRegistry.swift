import AnnounceModel
import AnnounceSystem

/// Opens a file or another input and picks its decoder by the bytes it starts with.
public enum DecoderRegistry {
    /// How a reason starts when the bytes are of no format the registry knows (a downloaded
    /// page may then be named by its Content-Type instead).
    public static let unknownFormat = "unknown format"
    /// The reason for a file whose headers parse and of which no frame decodes.
    static let noAudioFrames = "holds no audio frames"

    public static func open(_ path: String) throws(AnnounceError) -> any AudioDecoder {
        try open(FileName(path))
    }

    /// Opens the file by its name's bytes (which need not be UTF-8); messages show `file.text`.
    public static func open(_ file: FileName) throws(AnnounceError) -> any AudioDecoder {
        try open(FileInput(file))
    }

    /// Picks the decoder for `input` by its bytes; the decoder reads only through it.
    public static func open(_ input: any ByteInput) throws(AnnounceError) -> any AudioDecoder {
        let path = input.name
        let header = try input.bytes(at: 0, count: SniffedContainer.headerLength)
        guard !header.isEmpty else { throw .undecodable(path: path, reason: "empty file") }
        switch SniffedContainer.sniff(header) {
        case .mpeg where header.starts(with: Array("ID3".utf8)):
            // Taggers put ID3v2 before FLAC and AAC too: what follows the tag decides.
            let tagLength = Int64(SniffedContainer.id3v2TagLength(header))
            switch SniffedContainer.sniff(try input.bytes(at: tagLength, count: SniffedContainer.headerLength)) {
            case .flac:
                return try FLACDecoder(input: input)  // libFLAC skips the tag
            case .unsupported(let format):
                throw .undecodable(path: path, reason: "\(format) is not supported")
            default:
                return try MPG123Decoder(input: input)
            }
        case .flac:
            return try FLACDecoder(input: input)
        case .oggFLAC:
            return try FLACDecoder(input: input, inOgg: true)
        case .mp4:
            throw .undecodable(
                path: path, reason: "\(try MP4Probe.audioCodec(input).map { "\($0) in MP4" } ?? "MP4") is not supported"
            )
        case .unsupported(let format):
            throw .undecodable(path: path, reason: "\(format) is not supported")
        case .notAudio(let format):
            throw .undecodable(path: path, reason: "\(format), not audio")
        case .unknown where SniffedContainer.looksLikeText(header):
            throw .undecodable(path: path, reason: "\(unknownFormat) (text, not audio)")
        case .mpeg, .unknown:
            // MPEG audio from the first byte, or after junk or damaged first frames (mpg123
            // resyncs to it): a chain of frames in the first 64 KiB says which.
            let start = try input.bytes(at: 0, count: 65536)
            if let offset = SniffedContainer.mpegStreamStart(start, isWholeFile: start.count < 65536) {
                return try MPG123Decoder(input: input, skipsLeadingDamage: offset > 0)
            }
            // libsndfile knows a few more containers by their bytes (MPC2K, SDS, XI, HTK, MAT, PVF).
            do {
                return try SndFileDecoder(input: input, container: .unknown)
            } catch .undecodable {
                throw .undecodable(path: path, reason: "\(unknownFormat) (starts with \(hex(header.prefix(4))))")
            }
        case let container:
            return try SndFileDecoder(input: input, container: container)
        }
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: " ")
    }
}
