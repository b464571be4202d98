import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

extension DecoderRegistry {
    /// The decoder of one live stream segment (`LiveSegment`): `fd` a pipe read once from its
    /// start, `head` its first bytes (in the pipe too), `name` the stream's URL for messages.
    /// MPEG audio through libmpg123 (which finds its frames again after damage), Ogg Vorbis or
    /// Opus, WAV and libsndfile's other sequential containers through libsndfile. Bytes of no
    /// format from a server that called them something other than audio are named by that
    /// Content-Type (`not audio (text/html)`, 65), as a downloaded URL's are. Takes `fd`.
    public static func open(stream fd: Int32, head: [UInt8], name: String, contentType: String?) throws(AnnounceError)
        -> any AudioDecoder
    {
        func refuse(_ reason: String) -> AnnounceError {
            close(fd)
            return .undecodable(path: name, reason: reason)
        }
        let sniffed = SniffedContainer.sniff(head)
        let frames = SniffedContainer.mpegStreamStart(head, isWholeFile: head.count < LiveSegment.headLength)
        switch sniffed {
        case .mpeg where head.starts(with: Array("ID3".utf8)):
            return try MPG123Decoder(fileName: FileName(name), fd: fd)
        case _ where sniffed == .mpeg || (sniffed == .unknown && frames != nil):
            // A connection joined mid-stream starts mid-frame, where bytes may read as a frame
            // header of another rate: the decoder starts at a chain of frames instead.
            guard let frames, skip(frames, of: fd) else {
                throw refuse("no chain of MPEG audio frames in its first bytes")
            }
            return try MPG123Decoder(fileName: FileName(name), fd: fd, skipsLeadingDamage: frames > 0)
        case .ogg, .wav, .sndfile:
            return try SndFileDecoder(path: name, fd: fd, container: sniffed, sequential: true)
        case .unsupported(let format):
            throw refuse("\(format) is not supported")
        case .notAudio(let format):
            throw refuse("\(format), not audio")
        case .unknown:
            if let contentType, !contentType.hasPrefix("audio/"), !contentType.hasSuffix("/ogg") {
                throw refuse("not audio (\(contentType))")
            }
            throw refuse(SniffedContainer.looksLikeText(head) ? "\(unknownFormat) (text, not audio)" : unknownFormat)
        default:
            throw refuse("\(sniffed) is not supported as a live stream (MP3, Ogg Vorbis or Opus, or WAV are)")
        }
    }

    /// Reads and drops the first `count` bytes of a pipe; false when it ends or fails first.
    private static func skip(_ count: Int, of fd: Int32) -> Bool {
        var left = count
        var scratch = [UInt8](repeating: 0, count: min(max(count, 1), 4096))
        while left > 0 {
            let got = scratch.withUnsafeMutableBytes { read(fd, $0.baseAddress, min(left, $0.count)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return false }
            left -= got
        }
        return true
    }
}
