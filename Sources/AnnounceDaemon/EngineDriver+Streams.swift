import AnnounceModel
import AnnounceNetwork
import AnnounceSources
import AnnounceSystem
import Logging

extension EngineDriver {
    /// A live stream item's source (DESIGN §4, Live streams): a connection of its own on every
    /// play, so that a play after an interruption rejoins the stream as it is now; the config
    /// file's network settings as they are when it starts. Its drops and retries go to the log.
    static func liveSource(
        _ stream: LiveStream, of item: QueueItem, cancellation: Cancellation,
        titles: @escaping @Sendable (ItemID, String?) -> Void
    ) throws(AnnounceError) -> any Source {
        let id = item.id
        let logger = Logger(label: "announce-daemon")
        // The caller's proxy variables alone, as for a download: the daemon's own never count.
        let receiver = try StreamReceiver(
            url: stream.url, settings: StreamReceiver.Settings(UserConfiguration.load().configuration),
            proxies: item.clip.proxies ?? [:], titleChanged: { titles(id, $0) }, note: { logger.info("\(id) \($0)") })
        return try StreamSource(stream: stream, input: receiver, heard: item.heardFrames, cancellation: cancellation)
    }
}
