import AnnounceModel
import AnnounceNetwork
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
        var all: [ItemID: ProgressiveDownload] = [:]
        /// Waiting to start, oldest first.
        var waiting: [ItemID] = []
        /// Transfers running now.
        var active = 0
    }
    private let state = Mutex(State())

    init(media: MediaDirectory) {
        self.media = media
    }

    /// The download of `item` (a URL item, its media named), made when missing; it starts now
    /// when fewer than `parallel` run or it is `urgent` (its item plays), else in its turn. For
    /// a play, one that failed for a reason that may have passed (the server unreachable) is
    /// made anew, resuming from what it holds.
    @discardableResult
    func ensure(_ item: QueueItem, urgent: Bool = false) -> GrowingFile? {
        guard item.clip.url != nil, item.clip.media != nil else { return nil }
        let existing = state.withLock { $0.all[item.id] }
        if let existing, !(urgent && existing.failedTransiently) {
            return start(item.id, existing, urgent: urgent)
        }
        let made = makeDownload(item)  // the config file and the cache, outside the lock
        let download = state.withLock { state -> ProgressiveDownload in
            if let current = state.all[item.id], current !== existing { return current }  // another thread made one
            state.all[item.id] = made
            state.waiting.removeAll { $0 == item.id }
            state.waiting.append(item.id)
            return made
        }
        return start(item.id, download, urgent: urgent)
    }

    /// Starts `download` if it waits and may run now.
    private func start(_ id: ItemID, _ download: ProgressiveDownload, urgent: Bool) -> GrowingFile {
        let starts = state.withLock { state -> Bool in
            guard let index = state.waiting.firstIndex(of: id), urgent || state.active < Self.parallel else {
                return false
            }
            state.waiting.remove(at: index)
            state.active += 1
            return true
        }
        if starts { download.start { [self] in ended() } }
        return download.growing
    }

    private func makeDownload(_ item: QueueItem) -> ProgressiveDownload {
        let settings = UserConfiguration.load().configuration
        var request = DownloadRequest(
            url: item.clip.url ?? "", connectTimeout: settings.connectTimeout,
            stallTimeout: settings.stallTimeout, limit: MediaDirectory.limit)
        request.proxies = item.clip.proxies ?? [:]
        let cache =
            (item.clip.cache ?? settings.cacheDownloads)
            ? DownloadCache.user(limitBytes: settings.downloadCacheBytes) : nil
        let name = item.clip.media ?? ""
        return ProgressiveDownload(
            request: request, body: media.filePath(name), head: media.headPath(name), cache: cache)
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
    func stop(_ id: ItemID) {
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
