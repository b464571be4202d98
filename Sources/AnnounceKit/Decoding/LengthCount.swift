import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A file's exact length, counted on a handle and thread of its own so that playback starts at
/// once: an MP3 without an Info header has only libmpg123's estimate (off by up to 100x for
/// VBR) until every frame header has been read.
public final class LengthCount: Sendable {
    private let frames = Mutex<Int64?>(nil)

    public init(path: String) {
        let thread = startThread(named: "announce-count") { [self] in
            guard let decoder = try? DecoderRegistry.open(path), (try? decoder.scanForExactLength()) != nil else { return }
            frames.withLock { $0 = decoder.info.frames }
        }
        pthread_detach(thread)
    }

    /// The file's frames once counted; nil until then (or when counting failed).
    public var result: Int64? { frames.withLock { $0 } }
}
