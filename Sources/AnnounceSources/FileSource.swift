import AnnounceModel
import AnnounceSystem

/// A file clip as a `Source`: the decoder the registry picks by the file's bytes and, when its
/// header gives only an estimate (an MP3 without an Info header, a FLAC whose header says 0),
/// the exact count made alongside the play on a handle of its own. The bytes may be a local
/// file or a download still arriving (`GrowingInput`).
public final class FileSource: Source {
    private let decoder: any AudioDecoder
    private let lengthCount: LengthCount?
    public let format: SourceFormat
    public let arrivesWhileRead: Bool

    /// Opens `path` (65/66 with the reason when it cannot play).
    public convenience init(path: String) throws(AnnounceError) {
        try self.init(file: FileName(path))
    }

    /// Opens `file` by its bytes (65/66 with the reason when it cannot play).
    public convenience init(file: FileName) throws(AnnounceError) {
        try self.init(input: FileInput(file))
    }

    /// Reads `input` (65 with the reason when it cannot play; what keeps its bytes from coming).
    public init(input: any ByteInput) throws(AnnounceError) {
        arrivesWhileRead = input.arrivesWhileRead
        decoder = try DecoderRegistry.open(input)
        lengthCount = decoder.lengthIsExact ? nil : LengthCount(input: input)
        format = Self.format(of: decoder.info)
    }

    /// A decoder already open (the daemon's decoded alert sounds): nothing is counted.
    public init(decoder: any AudioDecoder) {
        self.decoder = decoder
        lengthCount = nil
        arrivesWhileRead = false
        format = Self.format(of: decoder.info)
    }

    private static func format(of info: AudioFileInfo) -> SourceFormat {
        SourceFormat(
            sampleRate: info.sampleRate, channels: info.channels, exactSampleFormat: info.exactSampleFormat,
            container: info.container, codec: info.codec)
    }

    public var name: String { decoder.path }

    public var readableFormats: Set<SampleFormat> { decoder.readableFormats }

    public var duration: SourceDuration {
        if let frames = lengthCount?.result { return .exact(frames) }
        guard let frames = decoder.info.frames else { return decoder.lengthIsExact ? .unknown : .estimated(nil) }
        return decoder.lengthIsExact ? .exact(frames) : .estimated(frames)
    }

    public func settledDuration() -> SourceDuration {
        if let frames = lengthCount?.awaitResult() { return .exact(frames) }
        return duration
    }

    public var warning: String? { decoder.truncationWarning }

    /// Every decoder here seeks to the frame.
    public var canSeek: Bool { true }
    public var resumption: Resumption { .exactFrame }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int
    {
        try decoder.read(into: buffer, frames: frames, as: format)
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        try decoder.seek(toFrame: frame)
    }
}
