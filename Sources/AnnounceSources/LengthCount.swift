import AnnounceModel
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A file's exact length, counted on a reader (`ByteInput.reopen`) and thread of its own so that
/// playback starts at once: an MP3 without an Info header has only libmpg123's estimate (off by
/// up to 100x for VBR), a FLAC with a STREAMINFO total of 0 none, until every frame has been
/// read. A download's count waits for all of it.
final class LengthCount: Sendable {
    private let frames = Mutex<Int64?>(nil)
    private let done = CountingSemaphore()

    init(input: any ByteInput) {
        let thread = startThread(named: "announce-count") { [self] in
            if let decoder = try? DecoderRegistry.open(input.reopen()), (try? decoder.scanForExactLength()) != nil {
                frames.withLock { $0 = decoder.info.frames }
            }
            done.signal()
        }
        pthread_detach(thread)
    }

    /// The file's frames once counted; nil until then (or when counting failed).
    var result: Int64? { frames.withLock { $0 } }

    /// Waits for the count (for a play that ended before it: an unpaced device); nil if it failed.
    func awaitResult() -> Int64? {
        done.wait()
        done.signal()  // later callers do not wait
        return result
    }
}
