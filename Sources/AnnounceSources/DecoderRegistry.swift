#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

/// Opens a file and picks its decoder by the bytes it starts with.
public enum DecoderRegistry {
    /// How a reason starts when the bytes are of no format the registry knows (a downloaded
    /// page may then be named by its Content-Type instead).
    public static let unknownFormat = "unknown format"

    public static func open(_ path: String) throws(AnnounceError) -> any AudioDecoder {
        try open(FileName(path))
    }

    /// Opens the file by its name's bytes (which need not be UTF-8); messages show `file.text`.
    public static func open(_ file: FileName) throws(AnnounceError) -> any AudioDecoder {
        let path = file.text
        let fd = try openReadable(file)
        var header = [UInt8](repeating: 0, count: SniffedContainer.headerLength)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            close(fd)
            if count < 0 { throw .cannotOpen(path: path, reason: systemErrorMessage(errno)) }
            throw .undecodable(path: path, reason: "empty file")
        }
        header.removeLast(header.count - count)
        switch SniffedContainer.sniff(header) {
        case .mpeg where header.starts(with: Array("ID3".utf8)):
            // Taggers put ID3v2 before FLAC and AAC too: what follows the tag decides.
            switch SniffedContainer.sniff(bytes(fd: fd, at: SniffedContainer.id3v2TagLength(header), count: SniffedContainer.headerLength)) {
            case .flac:
                return try FLACDecoder(fileName: file, fd: fd)  // libFLAC skips the tag
            case .unsupported(let format):
                close(fd)
                throw .undecodable(path: path, reason: "\(format) is not supported")
            default:
                return try MPG123Decoder(fileName: file, fd: fd)
            }
        case .flac:
            return try FLACDecoder(fileName: file, fd: fd)
        case .oggFLAC:
            return try FLACDecoder(fileName: file, fd: fd, inOgg: true)
        case .mp4:
            defer { close(fd) }
            throw .undecodable(path: path, reason: "\(MP4Probe.audioCodec(fd: fd).map { "\($0) in MP4" } ?? "MP4") is not supported")
        case .unsupported(let format):
            close(fd)
            throw .undecodable(path: path, reason: "\(format) is not supported")
        case .notAudio(let format):
            close(fd)
            throw .undecodable(path: path, reason: "\(format), not audio")
        case .unknown where SniffedContainer.looksLikeText(header):
            close(fd)
            throw .undecodable(path: path, reason: "\(unknownFormat) (text, not audio)")
        case .mpeg, .unknown:
            // MPEG audio from the first byte, or after junk or damaged first frames (mpg123
            // resyncs to it): a chain of frames in the first 64 KiB says which.
            let start = bytes(fd: fd, at: 0, count: 65536)
            if let offset = SniffedContainer.mpegStreamStart(start, isWholeFile: start.count < 65536) {
                return try MPG123Decoder(fileName: file, fd: fd, skipsLeadingDamage: offset > 0)
            }
            // libsndfile knows a few more containers by their bytes (MPC2K, SDS, XI, HTK, MAT, PVF).
            do {
                let decoder = try SndFileDecoder(path: path, fd: try dup(fd, path: path), container: .unknown)
                close(fd)
                return decoder
            } catch {
                close(fd)
                throw .undecodable(path: path, reason: "\(unknownFormat) (starts with \(hex(header.prefix(4))))")
            }
        case let container:
            return try SndFileDecoder(path: path, fd: fd, container: container)
        }
    }

    /// An fd for reading, or the reason a user can act on.
    static func openReadable(_ file: FileName) throws(AnnounceError) -> Int32 {
        let path = file.text
        // Non-blocking, so a FIFO or a device node cannot hang the open; refused below.
        let fd = file.withCString { Glibc.open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else {
            let code = errno
            throw .cannotOpen(path: path, reason: code == ENOENT ? "no such file" : systemErrorMessage(code))
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw .cannotOpen(path: path, reason: systemErrorMessage(code))
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return fd
        case S_IFDIR:
            close(fd)
            throw .cannotOpen(path: path, reason: "is a directory")
        default:
            close(fd)
            throw .cannotOpen(path: path, reason: "not a regular file")
        }
    }

    /// Up to `count` bytes of the file from `offset` (fewer at its end).
    private static func bytes(fd: Int32, at offset: Int, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        bytes.removeLast(count - max(0, read))
        return bytes
    }

    private static func dup(_ fd: Int32, path: String) throws(AnnounceError) -> Int32 {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .cannotOpen(path: path, reason: systemErrorMessage(errno)) }
        return copy
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: " ")
    }
}
