import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem
import AnnounceNetwork

/// The URL items' bodies: one `ProgressiveDownload` per item, into its media file, from when
/// it is accepted (or restored after a restart: resumed) until it has its outcome. Its play
/// reads the file as it grows. At most `parallel` transfer at once (a hundred URLs queued are
/// not a hundred connections); the others wait their turn in order, but the download of an
/// item about to play starts at once. Called from the control loop and the plays' threads.
final class Downloads: Sendable {
    let media: MediaDirectory
    static let parallel = 4
    private struct State {
        /// Every item's download, started or waiting, until its item ends.
        var all: [String: ProgressiveDownload] = [:]
        /// Waiting to start, oldest first.
        var waiting: [String] = []
        /// Transfers running now.
        var active = 0
    }
    private let state = Mutex(State())

    init(media: MediaDirectory) {
        self.media = media
    }

    /// The download of `item` (a URL item, its media named), made when missing; it starts now
    /// when fewer than `parallel` run or it is `urgent` (its item plays), else in its turn.
    @discardableResult
    func ensure(_ item: QueueItem, urgent: Bool = false) -> GrowingFile? {
        guard let url = item.clip.url, let name = item.clip.media else { return nil }
        let (download, start) = state.withLock { state -> (ProgressiveDownload, Bool) in
            let download = state.all[item.id] ?? {
                let settings = UserConfiguration.load().configuration
                var request = DownloadRequest(url: url, connectTimeout: settings.connectTimeout, stallTimeout: settings.stallTimeout,
                                              limit: MediaDirectory.limit)
                request.proxies = item.clip.proxies ?? [:]
                let cache = (item.clip.cache ?? settings.cacheDownloads) ? DownloadCache.user(limitBytes: settings.downloadCacheBytes) : nil
                let made = ProgressiveDownload(request: request, body: media.filePath(name), head: media.headPath(name), cache: cache)
                state.all[item.id] = made
                state.waiting.append(item.id)
                return made
            }()
            guard let index = state.waiting.firstIndex(of: item.id), urgent || state.active < Self.parallel else { return (download, false) }
            state.waiting.remove(at: index)
            state.active += 1
            return (download, true)
        }
        if start { download.start { [self] in ended() } }
        return download.growing
    }

    /// A transfer ended: the next waiting one starts.
    private func ended() {
        let next = state.withLock { state -> ProgressiveDownload? in
            state.active -= 1
            guard state.active < Self.parallel, !state.waiting.isEmpty else { return nil }
            state.active += 1
            return state.all[state.waiting.removeFirst()]
        }
        next?.start { [self] in ended() }
    }

    /// Ends `id`'s download (its item has its outcome; the spool deletes the files).
    func stop(_ id: String) {
        state.withLock { state in
            state.waiting.removeAll { $0 == id }
            return state.all.removeValue(forKey: id)
        }?.cancel()
    }

    /// The Content-Type a download's server gave, for naming a body that is not audio.
    func contentType(of name: String) -> String? {
        ProgressiveDownload.contentType(head: media.headPath(name))
    }
}
