import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A download as a decoder's bytes while it arrives: its file read on a descriptor of its own,
/// each read waiting (through the `GrowingFile`) for the bytes it wants, so a play starts once
/// its decoder has its headers (at most the first 64 KiB, besides an MP3's ID3v2 tag or FLAC's
/// metadata). With a known length (a Content-Length), MP3, WAV and FLAC play while the rest
/// arrives. Without one, what needs the length waits for the end: correct, but not progressive
/// (libsndfile asks for it at open; MP3 and FLAC play on). libsndfile's Ogg reader seeks to the
/// end at open, so an Ogg Vorbis or Opus download plays once it is complete.
public final class GrowingInput: ByteInput {
    public let file: GrowingFile
    public let name: String
    public var arrivesWhileRead: Bool { true }
    /// The play's stop, which ends a wait for bytes.
    private let cancellation: Cancellation?
    private let fd: Int32

    /// Opens `file.path` for reading; `name` is what messages call it (the URL).
    public init(file: GrowingFile, name: String? = nil, cancellation: Cancellation? = nil) throws(AnnounceError) {
        self.file = file
        self.name = name ?? file.path
        self.cancellation = cancellation
        fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: self.name, reason: systemErrorMessage(errno)) }
    }

    deinit { close(fd) }

    /// The final length once complete; until then the one the server announced, if it did.
    public var length: Int64? {
        if file.isComplete, let length = try? file.waitForEnd(cancellation: nil) { return length }
        return file.expectedLength
    }

    public func waitForLength() throws(AnnounceError) -> Int64 {
        try file.waitForEnd(cancellation: cancellation)
    }

    public func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws(AnnounceError) -> Int {
        var done = 0
        while done < count {
            let at = offset + Int64(done)
            let available = try file.wait(forByteAt: at, cancellation: cancellation)
            guard available > at else { break }  // complete, and this is its end
            let got = pread(fd, buffer + done, min(count - done, Int(available - at)), off_t(at))
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .cannotOpen(path: name, reason: systemErrorMessage(errno)) }
            // Fewer bytes than the writer said: it is rewriting the file from its start (a
            // server that ignored a Range request) and will say so; look again.
            if got == 0 {
                if file.isComplete { break }
                sched_yield()
            }
            done += got
        }
        return done
    }

    public func reopen() throws(AnnounceError) -> any ByteInput {
        try GrowingInput(file: file, name: name, cancellation: cancellation)
    }
}
