import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem
import AnnounceNetwork

/// The URL items' bodies: one `ProgressiveDownload` per item, into its media file, from when
/// it is accepted (or restored after a restart: resumed) until it has its outcome. Its play
/// reads the file as it grows. Called from the control loop and the plays' threads.
final class Downloads: Sendable {
    let media: MediaDirectory
    private let running = Mutex<[String: ProgressiveDownload]>([:])

    init(media: MediaDirectory) {
        self.media = media
    }

    /// The download of `item` (a URL item, its media named), started when it is not running.
    @discardableResult
    func ensure(_ item: QueueItem) -> GrowingFile? {
        guard let url = item.clip.url, let name = item.clip.media else { return nil }
        let (download, started) = running.withLock { running -> (ProgressiveDownload, Bool) in
            if let download = running[item.id] { return (download, false) }
            let settings = UserConfiguration.load().configuration
            var request = DownloadRequest(url: url, connectTimeout: settings.connectTimeout, stallTimeout: settings.stallTimeout,
                                          limit: MediaDirectory.limit)
            request.proxies = item.clip.proxies ?? [:]
            let cache = (item.clip.cache ?? settings.cacheDownloads) ? DownloadCache.user(limitBytes: settings.downloadCacheBytes) : nil
            let download = ProgressiveDownload(request: request, body: media.filePath(name), head: media.headPath(name), cache: cache)
            running[item.id] = download
            return (download, true)
        }
        if started { download.start() }
        return download.growing
    }

    /// Ends `id`'s download (its item has its outcome; the spool deletes the files).
    func stop(_ id: String) {
        running.withLock { $0.removeValue(forKey: id) }?.cancel()
    }

    /// The Content-Type a download's server gave, for naming a body that is not audio.
    func contentType(of name: String) -> String? {
        ProgressiveDownload.contentType(head: media.headPath(name))
    }
}
