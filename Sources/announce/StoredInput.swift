#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem
import AnnounceSources
import AnnounceNetwork

/// Audio `play` stores in the daemon's media directory before queueing it (DESIGN §2, the
/// media directory): stdin (`-`) or a URL's body. The clip names it as the user gave it
/// (`label`: stdin, the URL), and the daemon plays `file`.
struct StoredInput {
    let file: MediaFile
    let label: String
    /// The server's Content-Type, without parameters: only a hint, to name what is not audio.
    let contentType: String?

    /// `argument` read or downloaded into a media file; nil when it is neither `-` nor a URL.
    static func store(_ argument: String) throws(AnnounceError) -> StoredInput? {
        if argument == Play.stdinArgument {
            if isatty(STDIN_FILENO) == 1 { throw .usage("\(Clip.stdinLabel): is a terminal; pipe audio into announce play -") }
            let file = try mediaDirectory().store(from: STDIN_FILENO, label: Clip.stdinLabel, limit: limit)
            return StoredInput(file: file, label: Clip.stdinLabel, contentType: nil)
        }
        guard let scheme = Download.scheme(of: argument) else { return nil }
        guard Download.schemes.contains(scheme) else {
            throw .cannotOpen(path: argument, reason: "announce plays \(Download.schemes.dropLast().joined(separator: ", ")) and \(Download.schemes.last ?? "") URLs, not \(scheme)")
        }
        let writer = try mediaDirectory().begin(label: argument, limit: limit, overLimit: "the most announce downloads for one clip")
        let settings = UserConfiguration.load().configuration
        let type = try Download.fetch(argument, into: writer, connectTimeout: settings.connectTimeout,
                                      stallTimeout: settings.stallTimeout)
        let mediaType = type.map { String($0.prefix { $0 != ";" }).trimming(" \t").lowercased() }
        return StoredInput(file: try writer.finish(), label: argument, contentType: mediaType.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// An error checking the stored file, said of the input as the user gave it. Bytes of no
    /// format the sniffer knows, from a server that called them something other than audio,
    /// are named by that Content-Type: `not audio (text/html)`.
    func explain(_ error: AnnounceError) -> AnnounceError {
        let named = error.naming(file.path, as: label)
        if case .undecodable(_, let reason) = named, reason.hasPrefix(DecoderRegistry.unknownFormat),
           let contentType, !contentType.hasPrefix("audio/") {
            return .undecodable(path: label, reason: "not audio (\(contentType))")
        }
        return named
    }

    /// The daemon's media directory, in its runtime directory (where it may be started next).
    private static func mediaDirectory() throws(AnnounceError) -> MediaDirectory {
        MediaDirectory(runtime: try RuntimeDirectory.prepare())
    }

    /// `Limits.maxMediaBytes`; a debug build takes `ANNOUNCE_TEST_MEDIA_LIMIT` (bytes) instead,
    /// so the tests need not pipe or serve 256 MiB.
    private static var limit: Int {
        #if DEBUG
        if let limit = getenv("ANNOUNCE_TEST_MEDIA_LIMIT").flatMap({ Int(String(cString: $0)) }) { return limit }
        #endif
        return Limits.maxMediaBytes
    }
}
