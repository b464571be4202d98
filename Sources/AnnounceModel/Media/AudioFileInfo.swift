/// How samples are laid out in memory: interleaved, native endian.
public enum SampleFormat: String, Sendable, CaseIterable, Codable {
    case float32
    case int32
    case int16

    public var bytesPerSample: Int {
        switch self {
        case .float32, .int32: 4
        case .int16: 2
        }
    }
}

/// What a decoder found in a file, for `announce info` and for the engine.
public struct AudioFileInfo: Equatable, Sendable {
    /// Container as found: WAV, RF64, CAF, AIFF, AIFC, FLAC, Ogg, MP3.
    public var container: Container
    /// How the samples are coded: 16-bit PCM, Vorbis, MPEG-1 Layer III.
    public var codec: Codec
    public var sampleRate: Int
    public var channels: Int
    /// Total frames, when the file says or it was counted.
    public var frames: Int64?
    /// The sample format that reproduces the source exactly (int16 for 16-bit PCM).
    public var exactSampleFormat: SampleFormat
    /// What a full scan found wrong (a truncation, skipped data); nil when nothing or not scanned.
    public var damage: Damage? = nil

    public init(
        container: Container, codec: Codec, sampleRate: Int, channels: Int, frames: Int64?,
        exactSampleFormat: SampleFormat, damage: Damage? = nil
    ) {
        self.container = container
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.frames = frames
        self.exactSampleFormat = exactSampleFormat
        self.damage = damage
    }

    public var durationSeconds: Double? {
        frames.map { Double($0) / Double(sampleRate) }
    }
}
