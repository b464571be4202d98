import AnnounceModel
import AnnounceSystem

/// A source of interleaved PCM frames. Decoders stream: memory stays bounded
/// whatever the clip's length.
public protocol AudioDecoder: AnyObject {
    var path: String { get }
    var info: AudioFileInfo { get }
    /// Sample formats `read` can produce. Always contains `.float32`.
    var readableFormats: Set<SampleFormat> { get }
    /// Reads up to `frames` frames into `buffer` as `format`; returns frames read, 0 at the end.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError) -> Int
    /// Moves so the next read starts at `frame` (exact, not fuzzy).
    func seek(toFrame frame: Int64) throws(AnnounceError)
    /// Set when the input ended before the length its header promised, or data was skipped
    /// (`Damage`'s words: the decoders keep it typed).
    var truncationWarning: String? { get }
    /// False when `info.frames` is an estimate (`LengthCount` then counts it exactly).
    var lengthIsExact: Bool { get }
    /// Makes `info.frames` the exact number of frames a play gives (`announce info`; may read
    /// the whole file) and `info.damage` what is wrong with it.
    func scanForExactLength() throws(AnnounceError)
}

extension AudioDecoder {
    /// Headers that give the length exactly need no scan.
    public func scanForExactLength() throws(AnnounceError) {}
    public var lengthIsExact: Bool { true }

    /// Float32 interleaved frames into `buffer`; returns frames read, 0 at the end.
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(AnnounceError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        return try read(into: UnsafeMutableRawPointer(base), frames: buffer.count / info.channels, as: .float32)
    }
}

/// Limits every decoder applies before trusting a header.
func validate(channels: Int, sampleRate: Int, path: String) throws(AnnounceError) {
    guard channels > 0 else { throw .undecodable(path: path, reason: "header says 0 channels") }
    guard channels <= Limits.maxChannels else {
        throw .undecodable(
            path: path, reason: "header says \(channels) channels; at most \(Limits.maxChannels) are supported")
    }
    guard sampleRate > 0 else { throw .undecodable(path: path, reason: "header says 0 Hz") }
    guard Limits.sampleRates.contains(sampleRate) else {
        let rates = Limits.sampleRates
        throw .undecodable(
            path: path,
            reason: "header says \(sampleRate) Hz; \(rates.lowerBound) to \(rates.upperBound) Hz is supported")
    }
}
