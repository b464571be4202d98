#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

extension DecoderRegistry {
    /// The decoder of one live stream segment (`LiveSegment`): `fd` a pipe read once from its
    /// start, `head` its first bytes (in the pipe too), `name` the stream's URL for messages.
    /// MPEG audio through libmpg123 (which finds its frames again after damage), Ogg Vorbis or
    /// Opus, WAV and libsndfile's other sequential containers through libsndfile. Bytes of no
    /// format from a server that called them something other than audio are named by that
    /// Content-Type (`not audio (text/html)`, 65), as a downloaded URL's are. Takes `fd`.
    public static func open(stream fd: Int32, head: [UInt8], name: String, contentType: String?) throws(AnnounceError) -> any AudioDecoder {
        func refuse(_ reason: String) -> AnnounceError {
            close(fd)
            return .undecodable(path: name, reason: reason)
        }
        let sniffed = SniffedContainer.sniff(head)
        switch sniffed {
        case .mpeg:
            return try MPG123Decoder(fileName: FileName(name), fd: fd)
        case .ogg, .wav, .sndfile:
            return try SndFileDecoder(path: name, fd: fd, container: sniffed, sequential: true)
        case .unknown where SniffedContainer.mpegStreamStart(head) != nil:
            // Joined mid-frame: libmpg123 finds the next one.
            return try MPG123Decoder(fileName: FileName(name), fd: fd, skipsLeadingDamage: true)
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
}
