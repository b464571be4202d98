import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What a download keeps beside its body (`MediaDirectory.headName`): enough to resume it
/// with a Range after a restart, and to say what a body that is not audio was.
struct DownloadHead: Codable, Equatable {
    var url = ""
    var etag: String?
    var lastModified: String?
    /// The whole body's length, when the server said (and once complete).
    var length: Int64?
    var contentType: String?
    /// Every byte is in the body, fsynced.
    var complete = false

    /// What proves held bytes are the file's to an `If-Range`: a strong ETag (a weak one never
    /// matches there), else the Last-Modified; nil: nothing can, so a resume starts over.
    var validator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    static func load(_ path: String) -> DownloadHead? {
        readWholeFile(path, limit: 64 << 10).flatMap { try? JSONCoding.decode(DownloadHead.self, from: $0) }
    }

    func save(_ path: String) throws(AnnounceError) {
        try writeFileAtomically(JSONCoding.encode(self, orElse: "{}"), to: path)
    }
}
