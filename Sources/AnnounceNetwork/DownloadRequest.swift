import AnnounceModel

#if canImport(Glibc)
    import Glibc
#endif

/// What one transfer asks for (`Download.fetch`).
public struct DownloadRequest: Sendable {
    public var url: String
    public var connectTimeout: Double
    public var stallTimeout: Double
    /// Most bytes of the whole body; a Content-Length over it fails before the body.
    public var limit: Int
    /// Bytes already held: asks for the rest (`Range: bytes=N-`), guarded by `ifRange`.
    public var resumeFrom: Int64 = 0
    /// The validator the held bytes came with (an ETag, else a Last-Modified): a server whose
    /// file has changed since sends all of the new one (200) instead of the rest of the old.
    public var ifRange: String?
    /// Revalidating a kept copy (`DownloadCache`): its ETag and Last-Modified; a 304 keeps it.
    public var ifNoneMatch: String?
    public var ifModifiedSince: String?
    /// The caller's proxy variables (`CurlTransfer.proxies`).
    public var proxies: [String: String]?

    public init(url: String, connectTimeout: Double, stallTimeout: Double, limit: Int) {
        self.url = url
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
        self.limit = limit
    }

    /// Held bytes can be resumed over this URL's scheme: HTTP's ranges and validators prove
    /// them; a `file://` body is read again whole (it is local, and has neither).
    static func resumable(_ url: String) -> Bool {
        ["http", "https"].contains(Clip.urlScheme(of: url) ?? "")
    }

    /// Why a `file://` URL cannot be downloaded: its file is not a regular one (libcurl would
    /// block for good on a FIFO or a device, beyond the reach of a cancel or the stall timeout).
    /// nil for other schemes, and for a file that is missing (libcurl says so).
    static func localFileProblem(_ url: String) -> AnnounceError? {
        guard Clip.urlScheme(of: url) == "file", let separator = url.firstRange(of: "://") else { return nil }
        var path = url[separator.upperBound...]
        if path.lowercased().hasPrefix("localhost/") { path = path.dropFirst("localhost".count) }
        guard let decoded = percentDecoded(path.prefix { $0 != "?" && $0 != "#" }) else {
            return .cannotOpen(path: url, reason: "not a valid file URL")
        }
        var info = stat()
        let status = decoded.withUnsafeBufferPointer { bytes in
            stat(UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self), &info)
        }
        guard status == 0 else { return nil }
        return info.st_mode & S_IFMT == S_IFREG ? nil : .cannotOpen(path: url, reason: "not a regular file")
    }

    /// `%XX` decoded, NUL-terminated; nil for a bad escape or a NUL.
    private static func percentDecoded(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else {
                return nil
            }
            utf8 = utf8.dropFirst(2)
            bytes.append(value)
        }
        guard !bytes.contains(0) else { return nil }
        return bytes + [0]
    }

    /// Request header lines beyond libcurl's own.
    var headerLines: [String] {
        let fields = [
            ("If-Range", resumeFrom > 0 ? ifRange : nil), ("If-None-Match", ifNoneMatch),
            ("If-Modified-Since", ifModifiedSince)
        ]
        return fields.compactMap { name, value in
            guard let value, !value.isEmpty, !value.contains(where: { $0.isNewline }) else { return nil }
            return "\(name): \(value)"
        }
    }
}

/// The final response's status and the header fields a download keeps.
struct ResponseHead: Sendable, Equatable {
    /// 200, 206, 304, ...; 0 where there is none (file://).
    var status = 0
    /// The Content-Type, without parameters, lowercased.
    var contentType: String?
    /// This response's body length.
    var contentLength: Int64?
    /// A 206's first byte and the whole file's length (`Content-Range: bytes FIRST-LAST/TOTAL`).
    var rangeStart: Int64?
    var rangeTotal: Int64?
    var etag: String?
    var lastModified: String?

    init(status: Int = 0) { self.status = status }

    /// Served from `resumeFrom` on, as asked: a 206 whose range starts there.
    func continues(from resumeFrom: Int64) -> Bool {
        status == 206 && rangeStart == resumeFrom
    }

    /// The whole body's length, when the server said.
    var totalLength: Int64? {
        status == 206 ? rangeTotal : contentLength
    }

    /// One header line ("Name: value\r\n"); the names a download keeps are taken.
    mutating func take(headerLine line: String) {
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = String(line[line.index(after: colon)...]).trimming(" \t\r\n")
        switch name {
        case "content-type":
            let type = String(value.prefix { $0 != ";" }).trimming(" \t").lowercased()
            contentType = type.isEmpty ? nil : type
        case "content-length": contentLength = Int64(value)
        case "content-range":
            // bytes FIRST-LAST/TOTAL (TOTAL may be *)
            let spec = value.lowercased().hasPrefix("bytes ") ? value.dropFirst(6) : Substring(value)
            let parts = spec.split(separator: "/", maxSplits: 1)
            rangeStart = parts.first.flatMap { Int64($0.prefix { $0 != "-" }) }
            rangeTotal = parts.count == 2 ? Int64(parts[1]) : nil
        case "etag": etag = value.isEmpty ? nil : value
        case "last-modified": lastModified = value.isEmpty ? nil : value
        default: break
        }
    }
}

/// Where `Download.fetch` puts a body.
protocol DownloadSink: AnyObject {
    /// The final response's head, before its first byte (also for a body of none).
    func begin(_ head: ResponseHead) throws(AnnounceError)
    /// The next bytes of the body.
    func append(_ bytes: UnsafeRawBufferPointer) throws(AnnounceError)
    /// Asked about once a second and as data moves: true ends the transfer.
    var isCancelled: Bool { get }
}
