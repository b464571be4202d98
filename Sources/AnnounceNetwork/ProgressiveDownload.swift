import AnnounceModel
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A URL item's body, downloaded by the daemon into its media directory on a thread of its
/// own while the item may already play from it (`growing`). The file `body` holds the bytes so
/// far and `head` what a resume needs (`DownloadHead`): a daemon killed mid-download goes on
/// with a Range request guarded by `If-Range` (the same file, or all of the new one), or from
/// the start where that cannot be trusted (no validator, a weak ETag, not HTTP). A connection
/// that breaks, or a range that ends short, is asked again from where it stopped.
public final class ProgressiveDownload: Sendable {
    /// What readers of the body wait on.
    public let growing: GrowingFile
    private let request: DownloadRequest
    private let headPath: String
    /// Where a complete body is kept, and first looked for (`play --cache`).
    private let cache: DownloadCache?
    private let cancelled = Atomic<Bool>(false)
    /// A transfer that broke, that was not given a byte, or whose server gave no proof of
    /// the rest: ended with the error unless this many more tries bring bytes.
    static let retries = 3
    /// The body's file, made here so that a play may open it before the transfer starts.
    private let fd: Int32

    public init(request: DownloadRequest, body: String, head: String, cache: DownloadCache? = nil) {
        self.request = request
        self.cache = cache
        headPath = head
        growing = GrowingFile(path: body)
        fd = open(body, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 {
            growing.fail(.unavailable("\(request.url): cannot store it in \(body): \(systemErrorMessage(errno))"))
        }
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

    /// Ends the transfer within about a second. Its files go with it (the spool deletes them
    /// too; whichever comes second finds nothing).
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// The transfer ended without the body, for a reason another try might not have (the server
    /// unreachable or erring, the connection broken): a play that comes later asks again.
    public var failedTransiently: Bool { transientFailure.load(ordering: .relaxed) }
    private let transientFailure = Atomic<Bool>(false)

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    private func run() {
        guard fd >= 0, !isCancelled else { return }
        defer {
            if isCancelled {
                unlink(headPath)
                unlink(growing.path)
            }
        }
        var held = DownloadHead.load(headPath)
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
        if let held, held.complete, held.length == nil || held.length == size {
            growing.expect(length: size)
            growing.grew(to: size)
            return growing.finish()
        }
        if let problem = DownloadRequest.localFileProblem(request.url) { return growing.fail(problem) }
        // Resumed only where the held bytes can be proven the file's: else from the start.
        if let kept = held, kept.validator == nil || !DownloadRequest.resumable(request.url) { held = nil }
        let cached = held == nil ? cache?.lookup(request.url) : nil
        defer { if let cached { close(cached.fd) } }
        let body = DownloadBody(
            fd: fd, growing: growing, headPath: headPath, url: request.url, limit: request.limit,
            held: held == nil ? 0 : size, cached: cached
        ) { [self] in isCancelled }
        if let held, let length = held.length, length == size, size > 0 {
            return finish(body)  // all of it was here: killed between its last byte and its completion
        }
        var retries = Self.retries
        var conditional = cached != nil
        while true {
            var attempt = request
            attempt.resumeFrom = body.offset
            attempt.ifRange = held?.validator
            attempt.ifNoneMatch = conditional ? cached?.head.etag : nil
            attempt.ifModifiedSince = conditional ? cached?.head.lastModified : nil
            body.beginAttempt()
            do throws(AnnounceError) {
                let head = try Download.fetch(attempt, into: body)
                if head.status == 416, body.offset > 0 {
                    // Asked past the end: all of it is here, or the file shrank (then anew, whole).
                    if head.rangeTotal == body.offset { break }
                    body.restart()
                    held = nil
                    continue
                }
                guard let total = body.expectedTotal, body.offset < total else { break }
                // A range that ended short (a server that caps them): the rest is asked for.
                guard retries > 0, body.received > 0 else {
                    return fail(
                        .cannotOpen(path: request.url, reason: "the server sent \(body.offset) of \(total) bytes"),
                        transient: true)
                }
                retries -= 1
                held = DownloadHead.load(headPath)
            } catch {
                if isCancelled { return }
                if body.lostCachedCopy {
                    conditional = false  // the kept copy went meanwhile: asked for whole
                    continue
                }
                // Broke off having brought bytes: go on from there; else it is the answer.
                guard body.received > 0, retries > 0, Download.isBreak(error) else {
                    return fail(
                        error, transient: error.exitCode == AnnounceError.cannotOpen(path: "", reason: "").exitCode)
                }
                retries -= 1
                held = DownloadHead.load(headPath)
            }
        }
        finish(body)
    }

    private func finish(_ body: DownloadBody) {
        do throws(AnnounceError) { try body.complete() } catch { return fail(error, transient: false) }
        if !body.fromCache, let cache, let head = DownloadHead.load(headPath) {
            cache.store(fd, length: body.offset, head: head)
        }
    }

    private func fail(_ error: AnnounceError, transient: Bool) {
        transientFailure.store(transient, ordering: .relaxed)
        growing.fail(error)
    }
}

extension ProgressiveDownload {
    /// The Content-Type kept in a download's head, if the server gave one.
    public static func contentType(head: String) -> String? {
        DownloadHead.load(head)?.contentType
    }
}
