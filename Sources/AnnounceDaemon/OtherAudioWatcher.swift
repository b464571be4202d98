import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches what other applications play on the sound server announce's items reach (DESIGN §3,
/// Interruptions from other applications, Other audio playing), on a thread of its own
/// (`announce-others`) with its own connection: the server tells of every sink input that
/// appears, changes (a cork) or goes, the watcher lists them again and, when the
/// `OtherAudioScene` changed, tells the control thread (`report`). It watches only while the
/// control thread wants it to (announce has something to play); `lookSoon` answers a question
/// (`.otherAudioLooked`) when it does not, and `look` one that cannot wait.
final class OtherAudioWatcher: Sendable {
    /// What the control thread wants watched: the server `environment` reaches.
    private struct Wish: Equatable {
        var environment: [String: String]?
        var interruptingRoles: [String]
    }

    /// What was last seen, and where.
    private struct Seen {
        var wish: Wish
        /// nil: no sound server answers there.
        var scene: OtherAudioScene?
    }

    private struct Shared {
        var wish: Wish?
        var seen: Seen?
        /// A look asked for by `lookSoon`.
        var lookFor: Wish?
        var stopping = false
    }

    private let shared = Mutex(Shared())
    private let wake: EventFD
    private let logger: Logger
    private let post: @Sendable (EngineReport) -> Void
    private let finished = CountingSemaphore()
    /// How long a wait for news lasts before the wish is looked at again.
    static let sliceMilliseconds: Int32 = 200
    static let retryMilliseconds: Int32 = 1000

    /// `post`: `.otherAudio` when the scene watched changed, `.otherAudioLooked` after `lookSoon`.
    init(logger: Logger, post: @escaping @Sendable (EngineReport) -> Void) throws(AnnounceError) {
        wake = try EventFD()
        self.logger = logger
        self.post = post
        _ = startThread(named: "announce-others") { [self] in run() }
    }

    /// Watch the server `environment` reaches (roles that interrupt: `interruptingRoles`), or stop with `watching` false.
    func watch(_ watching: Bool, environment: [String: String]?, interruptingRoles: [String]) {
        let wish = watching ? Wish(environment: environment, interruptingRoles: interruptingRoles) : nil
        let changed = shared.withLock { shared in
            defer { shared.wish = wish }
            return shared.wish != wish
        }
        if changed { wake.signal() }
    }

    /// The scene last seen on the server `environment` reaches, when it is watched and was seen:
    /// `.some(nil)` when no server answers there; nil when not known.
    func scene(for environment: [String: String]?) -> OtherAudioScene?? {
        shared.withLock { shared in
            guard let seen = shared.seen, seen.wish == shared.wish, seen.wish.environment == environment else {
                return nil
            }
            return .some(seen.scene)
        }
    }

    /// One look at the server `environment` reaches, on the watcher's thread, told with
    /// `.otherAudioLooked` (within a slice when it watches; each look bounded as `look`).
    func lookSoon(environment: [String: String]?, interruptingRoles: [String]) {
        shared.withLock { $0.lookFor = Wish(environment: environment, interruptingRoles: interruptingRoles) }
        wake.signal()
    }

    /// Looks once, on the calling thread (each call bounded by `SoundServerStreams.timeoutMilliseconds`):
    /// nil when no sound server answers.
    static func look(environment: [String: String]?, interruptingRoles: [String]) -> OtherAudioScene? {
        do throws(AnnounceError) {
            let server = try SoundServerStreams(environment: environment)
            return OtherAudioScene(
                streams: try server.streams(), ownProcessID: Int64(getpid()), interruptingRoles: interruptingRoles)
        } catch {
            return nil
        }
    }

    func stop() {
        shared.withLock { $0.stopping = true }
        wake.signal()
        _ = finished.wait(seconds: 1)
    }

    // MARK: the watching thread

    private func run() {
        var server: SoundServerStreams?
        var serverWish: Wish?
        while true {
            let (wish, stopping, lookFor) = shared.withLock { shared in
                defer { shared.lookFor = nil }
                return (shared.wish, shared.stopping, shared.lookFor)
            }
            if stopping { break }
            if let lookFor {
                post(
                    .otherAudioLooked(
                        Self.look(environment: lookFor.environment, interruptingRoles: lookFor.interruptingRoles)))
            }
            guard let wish else {
                if server != nil { publish(nil, wish: nil) }
                server = nil
                _ = wake.wait(milliseconds: -1)
                continue
            }
            do throws(AnnounceError) {
                if server == nil || serverWish?.environment != wish.environment {
                    server = nil
                    let connected = try SoundServerStreams(environment: wish.environment)
                    try connected.subscribe()
                    server = connected
                    serverWish = wish
                    try look(connected, wish: wish)
                } else if serverWish != wish {
                    serverWish = wish  // other roles: the same streams, read anew
                    try look(server!, wish: wish)
                }
                if try server!.waitForNews(milliseconds: Self.sliceMilliseconds) { try look(server!, wish: wish) }
            } catch {
                // Plain ALSA, or a server gone: nothing interrupts, nothing plays; asked again in a second.
                if server != nil || shared.withLock({ $0.seen == nil || $0.seen?.scene != nil }) {
                    logger.info("other audio: not watched (\(error.description))")
                }
                server = nil
                publish(nil, wish: wish)
                _ = wake.wait(milliseconds: Self.retryMilliseconds)
            }
        }
        finished.signal()
    }

    private func look(_ server: SoundServerStreams, wish: Wish) throws(AnnounceError) {
        let scene = OtherAudioScene(
            streams: try server.streams(), ownProcessID: Int64(getpid()),
            interruptingRoles: wish.interruptingRoles)
        publish(scene, wish: wish)
    }

    /// Keeps what was seen and tells the control thread when it changed.
    private func publish(_ scene: OtherAudioScene?, wish: Wish?) {
        let changed = shared.withLock { shared in
            let before = shared.seen
            shared.seen = wish.map { Seen(wish: $0, scene: scene) }
            return before?.scene != scene || (before == nil) != (wish == nil)
        }
        if changed { post(.otherAudio(scene)) }
    }
}
