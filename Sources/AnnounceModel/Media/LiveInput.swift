/// A live stream's bytes as a decoder reads them: a segment per connection, and per link of a
/// chained Ogg stream, each a pipe read from its start, so a decoder never has to skip ahead or
/// go back. Made by AnnounceNetwork (StreamReceiver), read by AnnounceSources (StreamSource):
/// neither layer sees the other.
public protocol LiveInput: AnyObject, Sendable {
    /// Waits for the next segment's first bytes; nil when the stream ended as a whole (a body of
    /// known length received to its end). Throws what ended it: the first connection's failure
    /// (66), the reconnect limit passed (66), or a stop.
    func nextSegment() throws(AnnounceError) -> LiveSegment?
    /// Ends the connection and its thread now; a wait in `nextSegment` ends. Twice is fine.
    func stop()
}

/// One stretch of a live stream that a decoder reads from its first byte.
public struct LiveSegment: Sendable {
    /// Its first bytes (up to `LiveSegment.headLength`), to tell the format by; they are in
    /// `fd` too.
    public var head: [UInt8]
    /// The read end of a pipe with the segment's bytes from its start; the taker closes it, and
    /// closing it early tells the sender the segment is no use (it connects again).
    public var fd: Int32
    /// The response's Content-Type, lowercased, without parameters: it names a page that is not audio.
    public var contentType: String?
    /// A connection's first segment (not a later link of a chained Ogg stream on the same one).
    public var startsConnection: Bool

    public init(head: [UInt8], fd: Int32, contentType: String?, startsConnection: Bool) {
        self.head = head
        self.fd = fd
        self.contentType = contentType
        self.startsConnection = startsConnection
    }

    /// How many first bytes a segment waits for before it is handed over (fewer when it ends
    /// sooner): enough to know MP3 by a chain of frames, half a second at 128 kbps.
    public static let headLength = 8192
}
