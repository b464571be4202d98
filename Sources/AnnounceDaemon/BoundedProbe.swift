import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A device check that the control thread waits for only so long. Opening a sound server's PCM
/// connects to the server, and a server that accepts and never answers would stall every
/// client of the daemon until libpulse gives up (seconds to minutes); so the check runs on a
/// thread of its own, and past `seconds` the device passes: the item is accepted, and its play
/// finds out (and reports) what the check could not. The abandoned check ends by itself.
enum BoundedProbe {
    static let seconds = 1.0

    static func check(
        within seconds: Double = BoundedProbe.seconds,
        _ probe: @escaping @Sendable () throws(AnnounceError) -> Void
    ) throws(AnnounceError) {
        final class Outcome: @unchecked Sendable {
            let done = CountingSemaphore()
            let error = Mutex<AnnounceError?>(nil)
        }
        let outcome = Outcome()
        _ = startThread(named: "announce-probe") {
            do throws(AnnounceError) { try probe() } catch { outcome.error.withLock { $0 = error } }
            outcome.done.signal()
        }
        guard outcome.done.wait(seconds: seconds) else { return }
        if let error = outcome.error.withLock({ $0 }) { throw error }
    }
}
