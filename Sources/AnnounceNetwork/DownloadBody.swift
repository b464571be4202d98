import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A download's body file as transfers write it, its head beside it, and what readers are
/// told (`growing`). Bytes held from before (a resume) are shown to readers only once the
/// server has confirmed them (a 206 from there on).
final class DownloadBody: DownloadSink {
    let fd: Int32
    let growing: GrowingFile
    let headPath: String
    let url: String
    let limit: Int
    let cancelled: () -> Bool
    /// The kept copy to use on a 304 (`DownloadCache.lookup`), open.
    let cached: DownloadCache.Entry?
    private(set) var offset: Int64
    /// Bytes this attempt brought (`beginAttempt`): a try that brought none is not repeated.
    private(set) var received: Int64 = 0
    /// The body's whole length, as the server said.
    private(set) var expectedTotal: Int64?
    /// The server said the kept copy is current (304): the body is that copy.
    private(set) var fromCache = false
    /// A 304 came for a kept copy that could not be read: ask again without a validator.
    private(set) var lostCachedCopy = false
    private var head = DownloadHead()

    init(
        fd: Int32, growing: GrowingFile, headPath: String, url: String, limit: Int, held: Int64,
        cached: DownloadCache.Entry?, cancelled: @escaping () -> Bool
    ) {
        self.fd = fd
        self.growing = growing
        self.headPath = headPath
        self.url = url
        self.limit = limit
        self.cached = cached
        self.cancelled = cancelled
        offset = held
        if held == 0 { _ = ftruncate(fd, 0) }
        if held > 0, let kept = DownloadHead.load(headPath) { head = kept }
    }

    var isCancelled: Bool { cancelled() }

    func beginAttempt() {
        received = 0
        lostCachedCopy = false
    }

    func begin(_ response: ResponseHead) throws(AnnounceError) {
        // Its item ended: its files go, so none is written again.
        if isCancelled { throw .cannotOpen(path: url, reason: "cancelled") }
        if response.status == 304, let cached { return try copy(cached) }
        if response.status == 206 && !response.continues(from: offset) {
            throw .cannotOpen(
                path: url,
                reason:
                    "the server sent another range than bytes \(offset)- (\(response.rangeStart.map(String.init) ?? "none"))"
            )
        }
        if !response.continues(from: offset) { restart() }
        let total = response.totalLength ?? (response.status == 206 ? nil : response.contentLength.map { $0 + offset })
        if let total, total > Int64(limit) { throw Download.tooLarge(url, limit: limit) }
        expectedTotal = total
        head = DownloadHead(
            url: url, etag: response.etag, lastModified: response.lastModified, length: total,
            contentType: response.contentType, complete: false)
        growing.expect(length: total)
        try head.save(headPath)
        growing.grew(to: offset)  // bytes held from before are the file's: the server said so
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws(AnnounceError) {
        if offset + Int64(bytes.count) > Int64(limit) { throw Download.tooLarge(url, limit: limit) }
        var done = 0
        while done < bytes.count {
            let written = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 && errno == EINTR { continue }
            if written < 0 {
                throw .unavailable("\(url): cannot store it in \(growing.path): \(systemErrorMessage(errno))")
            }
            done += written
        }
        offset += Int64(bytes.count)
        received += Int64(bytes.count)
        growing.grew(to: offset)
    }

    /// The kept copy becomes the body.
    private func copy(_ cached: DownloadCache.Entry) throws(AnnounceError) {
        restart()
        head = cached.head
        head.complete = false
        expectedTotal = cached.length
        growing.expect(length: cached.length)
        try head.save(headPath)
        let growing = growing
        guard AnnounceNetwork.copy(from: cached.fd, to: fd, length: cached.length, progress: { growing.grew(to: $0) })
        else {
            restart()
            lostCachedCopy = true
            throw .cannotOpen(path: url, reason: "the cached copy cannot be read")
        }
        offset = cached.length
        fromCache = true
    }

    /// Back to no bytes: the server sends the whole body (it ignored the Range, or the file changed).
    func restart() {
        guard offset > 0 else { return }
        _ = ftruncate(fd, 0)
        offset = 0
        growing.grew(to: 0)
    }

    /// All of it is here: durable, then told.
    func complete() throws(AnnounceError) {
        if isCancelled { throw .cannotOpen(path: url, reason: "cancelled") }
        guard offset > 0 else { throw .undecodable(path: url, reason: "empty") }
        fsync(fd)
        head.url = url
        head.length = offset
        head.complete = true
        try head.save(headPath)
        growing.expect(length: offset)
        growing.grew(to: offset)
        growing.finish()
    }
}
