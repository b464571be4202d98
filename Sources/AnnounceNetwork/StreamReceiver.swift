import AnnounceModel
import AnnounceSystem
import CCurl
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play --stream URL`, the network side (DESIGN §4, Live streams): one thread
/// (`announce-net`) connects through libcurl asking for ICY metadata, takes the metadata out of
/// the body, splits a chained Ogg stream into its links, and writes the rest into one pipe per
/// segment for a decoder (`LiveInput`; `StreamConnection` is one connection). A connection
/// that drops is made again with backoff (`ReconnectBackoff`) until the config file's
/// `reconnect-limit`; the first connection's failure ends it at once. `stop` ends it promptly:
/// every wait of the thread also waits for it.
public final class StreamReceiver: LiveInput, @unchecked Sendable {
    /// The config file's network settings, in seconds.
    public struct Settings: Sendable {
        public var connectTimeout: Double
        public var stallTimeout: Double
        public var reconnectLimit: Double

        public init(_ configuration: UserConfiguration) {
            connectTimeout = configuration.connectTimeout
            stallTimeout = configuration.stallTimeout
            reconnectLimit = configuration.reconnectLimit
        }
    }

    public let url: String
    let settings: Settings
    /// The caller's proxy variables (`CurlTransfer.proxies`).
    let proxies: [String: String]?
    /// Signalled by `stop`: among the descriptors every wait of the thread polls.
    let stopSignal: EventFD
    private let titleChanged: @Sendable (String?) -> Void
    private let note: @Sendable (String) -> Void

    private struct State {
        var segments: [LiveSegment] = []
        var ended = false
        var failure: AnnounceError?
        var stopped = false
        var title: String?
    }
    private let state = Mutex(State())
    /// Posted whenever `state` has news for `nextSegment`.
    private let news = CountingSemaphore()

    /// Starts connecting. `titleChanged`: the stream's title (ICY, an Ogg link's comments) as it
    /// changes, from the network thread; `note`: a line for the daemon's log (a drop, a retry).
    public init(
        url: String, settings: Settings, proxies: [String: String]?,
        titleChanged: @escaping @Sendable (String?) -> Void,
        note: @escaping @Sendable (String) -> Void
    ) throws(AnnounceError) {
        if let problem = announce_curl_load() { throw .unavailable(String(cString: problem)) }
        self.url = url
        self.settings = settings
        self.proxies = proxies
        self.titleChanged = titleChanged
        self.note = note
        stopSignal = try EventFD()
        // Detached: it holds this object until it has closed its connection, whoever waits.
        pthread_detach(startThread(named: "announce-net") { [self] in run() })
    }

    deinit {
        for segment in state.withLock({ $0.segments }) { close(segment.fd) }
    }

    public func nextSegment() throws(AnnounceError) -> LiveSegment? {
        while true {
            let next = state.withLock { state -> Result<LiveSegment?, AnnounceError>? in
                if !state.segments.isEmpty { return .success(state.segments.removeFirst()) }
                if state.stopped { return .failure(Self.stopped) }
                if let failure = state.failure { return .failure(failure) }
                return state.ended ? .success(nil) : nil
            }
            if let next { return try next.get() }
            news.wait()
        }
    }

    public func stop() {
        state.withLock { $0.stopped = true }
        stopSignal.signal()
        news.signal()
    }

    /// What `nextSegment` throws once stopped.
    public static let stopped = AnnounceError.internal("the stream was stopped")

    var isStopped: Bool { state.withLock { $0.stopped } }

    /// A connection's segment is ready to be read.
    func deliver(_ segment: LiveSegment) {
        let taken = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.segments.append(segment)
            return true
        }
        if taken { news.signal() } else { close(segment.fd) }
    }

    /// A title seen on a connection; told only when it is not the one told last.
    func noteTitle(_ title: String?) {
        let changed = state.withLock { state -> Bool in
            defer { state.title = title }
            return state.title != title
        }
        if changed { titleChanged(title) }
    }

    private func finish(failure: AnnounceError? = nil) {
        state.withLock { state in
            state.ended = true
            state.failure = failure
        }
        news.signal()
    }

    private func run() {
        guard let multi = announce_curl_multi_init() else {
            return finish(failure: .internal("libcurl cannot start (curl_multi_init failed)"))
        }
        defer { announce_curl_multi_cleanup(multi) }
        var backoff = ReconnectBackoff(limit: settings.reconnectLimit)
        // Audio came on some connection: from then on a failure is a drop, retried.
        var played = false
        while !isStopped {
            let connection = StreamConnection(receiver: self)
            let result = connection.run(multi)
            if isStopped { break }
            let reason: AnnounceError
            switch result {
            case .ended: return finish()
            case .dropped(let error): reason = error
            }
            guard played || connection.audioSince != nil else { return finish(failure: reason) }
            played = true
            switch backoff.dropped(at: SystemClock.monotonic(), audioSince: connection.audioSince) {
            case .giveUp:
                return finish(
                    failure: .cannotOpen(
                        path: url,
                        reason:
                            "the stream dropped and did not come back within \(Self.seconds(settings.reconnectLimit)) (\(Self.reason(reason)))"
                    ))
            case .retry(let delay):
                note("\(url): \(Self.reason(reason)); connecting again in \(Self.seconds(delay))")
                if stopSignal.wait(milliseconds: Int32((delay * 1000).rounded(.up))) { break }
            }
        }
        finish()
    }

    /// An error's words without the URL that begins them.
    private static func reason(_ error: AnnounceError) -> String {
        if case .cannotOpen(_, let reason) = error { return reason }
        return error.description
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
