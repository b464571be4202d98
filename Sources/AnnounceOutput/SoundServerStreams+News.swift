import AnnounceModel
import CPulse

/// News of the server's playback streams, for the watcher of calls and other audio (DESIGN §3,
/// Interruptions from other applications): the server tells when a stream appears, changes
/// (a cork) or goes, and the watcher lists them again.
extension SoundServerStreams {
    /// Asks the server for that news from now on.
    public func subscribe() throws(AnnounceError) {
        guard announce_pulse_subscribe_streams(pulse, Self.timeoutMilliseconds) == 0 else {
            throw .unavailable("the sound server does not tell of its streams")
        }
    }

    /// Waits up to `milliseconds` for news: true when some came.
    public func waitForNews(milliseconds: Int32) throws(AnnounceError) -> Bool {
        let result = announce_pulse_wait_for_news(pulse, milliseconds)
        guard result >= 0 else { throw .unavailable("the sound server stopped answering") }
        return result == 1
    }
}
