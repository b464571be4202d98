import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

/// A URL item's body, downloaded by the daemon into its media directory on a thread of its
/// own while the item may already play from it (`growing`). The file `body` holds the bytes so
/// far and `head` what a resume needs (`DownloadHead`): a daemon killed mid-download goes on
/// with a Range request (`If-Range`: the same file or all of the new one), or from the start
/// where the server ignores ranges. A dropped connection is tried again from where it broke.
public final class ProgressiveDownload: Sendable {
    /// What readers of the body wait on.
    public let growing: GrowingFile
    private let request: DownloadRequest
    private let headPath: String
    /// Where a complete body is kept, and first looked for (`play --cache`).
    private let cache: DownloadCache?
    private let cancelled = Atomic<Bool>(false)
    /// Tries after a transfer that broke off having brought bytes.
    static let retries = 3

    /// The body's file, made here so that a play may open it before the transfer starts.
    private let fd: Int32

    public init(request: DownloadRequest, body: String, head: String, cache: DownloadCache? = nil) {
        self.request = request
        self.cache = cache
        headPath = head
        growing = GrowingFile(path: body)
        fd = open(body, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { growing.fail(.unavailable("\(request.url): cannot store it in \(body): \(systemErrorMessage(errno))")) }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Starts the transfer (or finds it done) on its own thread; `ended` runs on it at the end.
    public func start(ended: @escaping @Sendable () -> Void = {}) {
        let thread = startThread(named: "announce-fetch") { [self] in
            run()
            ended()
        }
        pthread_detach(thread)
    }

    /// Ends the transfer within about a second; the files are the caller's to delete.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    private func run() {
        guard fd >= 0 else { return }
        var held = DownloadHead.load(headPath)
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
        if let held, held.complete, held.length == nil || held.length == size {
            growing.expect(length: size)
            growing.grew(to: size)
            return growing.finish()
        }
        // A kept copy is asked about only for a download not begun (one begun resumes instead).
        let cached = held == nil ? cache?.lookup(request.url) : nil
        let body = BodyFile(fd: fd, growing: growing, headPath: headPath, url: request.url, limit: request.limit,
                            held: held == nil ? 0 : size, cached: cached) { [self] in cancelled.load(ordering: .relaxed) }
        var retries = Self.retries
        while true {
            var attempt = request
            attempt.resumeFrom = body.offset
            attempt.ifRange = held?.etag ?? held?.lastModified
            attempt.ifNoneMatch = cached?.head.etag
            attempt.ifModifiedSince = cached?.head.lastModified
            let before = body.offset
            do throws(AnnounceError) {
                let head = try Download.fetch(attempt, into: body)
                if head.status == 416, body.offset > 0 {
                    // Asked past the end: held all of it, or the file shrank; fetched again whole.
                    if let total = head.rangeTotal, total == body.offset { break }
                    body.restart()
                    held = nil
                    continue
                }
                break
            } catch {
                if cancelled.load(ordering: .relaxed) { return }
                // Broke off having brought bytes: go on from there; else it is the answer.
                guard body.offset > before, retries > 0, Download.isBreak(error) else { return growing.fail(error) }
                retries -= 1
                held = DownloadHead.load(headPath)
            }
        }
        do throws(AnnounceError) { try body.complete() } catch { return growing.fail(error) }
        if !body.fromCache, let cache, let head = DownloadHead.load(headPath) { cache.store(fd, length: body.offset, head: head) }
    }
}

/// The body's file as the transfer writes it, and its head beside it.
private final class BodyFile: DownloadSink {
    let fd: Int32
    let growing: GrowingFile
    let headPath: String
    let url: String
    let limit: Int
    let cancelled: () -> Bool
    let cached: (body: String, head: DownloadHead)?
    private(set) var offset: Int64
    /// The server said the kept copy is current (304): the body is that copy.
    private(set) var fromCache = false
    private var head = DownloadHead()

    init(fd: Int32, growing: GrowingFile, headPath: String, url: String, limit: Int, held: Int64,
         cached: (body: String, head: DownloadHead)?, cancelled: @escaping () -> Bool) {
        self.cached = cached
        self.fd = fd
        self.growing = growing
        self.headPath = headPath
        self.url = url
        self.limit = limit
        self.cancelled = cancelled
        offset = held
        if held == 0 { _ = ftruncate(fd, 0) }
        growing.grew(to: held)
    }

    var isCancelled: Bool { cancelled() }

    func begin(_ response: ResponseHead) throws(AnnounceError) {
        // Its item ended: the spool deletes the files, so none is written again.
        if isCancelled { throw .cannotOpen(path: url, reason: "cancelled") }
        if response.status == 304, let cached { return try copy(cached) }
        if response.status == 206, let start = response.rangeStart, start != offset, start != 0 {
            throw .cannotOpen(path: url, reason: "the server sent bytes from \(start) when asked for \(offset) on")
        }
        if !response.continues(from: offset) { restart() }
        let total = response.totalLength ?? (response.status == 206 ? nil : response.contentLength.map { $0 + offset })
        if let total, total > Int64(limit) { throw Download.tooLarge(url, limit: limit) }
        head = DownloadHead(url: url, etag: response.etag, lastModified: response.lastModified, length: total,
                            contentType: response.contentType, complete: false)
        growing.expect(length: total)
        try head.save(headPath)
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws(AnnounceError) {
        if offset + Int64(bytes.count) > Int64(limit) { throw Download.tooLarge(url, limit: limit) }
        var done = 0
        while done < bytes.count {
            let written = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 && errno == EINTR { continue }
            if written < 0 { throw .unavailable("\(url): cannot store it in \(growing.path): \(systemErrorMessage(errno))") }
            done += written
        }
        offset += Int64(bytes.count)
        growing.grew(to: offset)
    }

    /// The kept copy becomes the body.
    private func copy(_ cached: (body: String, head: DownloadHead)) throws(AnnounceError) {
        let source = open(cached.body, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard source >= 0, fstat(source, &info) == 0 else {
            if source >= 0 { close(source) }
            throw .cannotOpen(path: url, reason: "the cached copy \(cached.body) cannot be read: \(systemErrorMessage(errno))")
        }
        defer { close(source) }
        restart()
        head = cached.head
        head.complete = false
        growing.expect(length: Int64(info.st_size))
        try head.save(headPath)
        let growing = growing
        guard AnnounceNetwork.copy(from: source, to: fd, length: Int64(info.st_size), progress: { growing.grew(to: $0) }) else {
            throw .unavailable("\(url): cannot store it in \(growing.path): \(systemErrorMessage(errno))")
        }
        offset = Int64(info.st_size)
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
        head.length = offset
        head.complete = true
        try head.save(headPath)
        growing.expect(length: offset)
        growing.finish()
    }
}

extension ProgressiveDownload {
    /// The Content-Type kept in a download's head, if the server gave one.
    public static func contentType(head: String) -> String? {
        DownloadHead.load(head)?.contentType
    }
}
