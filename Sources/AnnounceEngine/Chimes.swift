import AnnounceModel

/// The sounds an item plays before and after itself (`--chime`, `--chime-after`): float frames
/// in the rate and channels of the item's source, joined to it in one stream by `ClipFeed`.
/// They count in none of the item's positions or lengths.
public struct Chimes: Sendable {
    public var before: [Float] = []
    public var after: [Float] = []

    public init(before: [Float] = [], after: [Float] = []) {
        self.before = before
        self.after = after
    }

    public var isEmpty: Bool { before.isEmpty && after.isEmpty }

    /// 1/√2: one channel made two, or two made one, at the same loudness.
    static let minus3dB: Float = 0.70710678

    /// The longest chime taken, in seconds: more of a file is not read.
    public static let longestSeconds = 30.0

    /// All of `sound` (at most `longestSeconds`) as float frames in `format`'s rate and channels,
    /// as loud as it was measured: a mono chime on the front pair 3 dB down (two equal channels
    /// measure 3 dB over one), a wider one's front pair summed 3 dB down into mono, else its
    /// channels in order and silence on the rest.
    public static func render(_ sound: any Source, as format: SourceFormat) throws(AnnounceError) -> [Float] {
        let from = sound.format.channels
        let to = format.channels
        let limit = Int(longestSeconds * Double(sound.format.sampleRate))
        var frames: [Float] = []
        let chunk = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * from)
        defer { buffer.deallocate() }
        var total = 0
        while total < limit {
            let got = try sound.read(into: buffer, frames: min(chunk, limit - total), as: .float32)
            if got == 0 { break }
            total += got
            for frame in 0..<got {
                let base = frame * from
                if to == 1 {
                    frames.append(from == 1 ? buffer[base] : (buffer[base] + buffer[base + 1]) * Self.minus3dB)
                } else if from == 1 {
                    for channel in 0..<to { frames.append(channel < 2 ? buffer[base] * Self.minus3dB : 0) }
                } else {
                    for channel in 0..<to { frames.append(channel < from ? buffer[base + channel] : 0) }
                }
            }
        }
        guard sound.format.sampleRate != format.sampleRate, total > 0 else { return frames }
        let resampler = try Resampler(channels: to, inputRate: sound.format.sampleRate, outputRate: format.sampleRate)
        let capacity = resampler.outputCapacity(forInputFrames: total)
        var resampled = [Float](repeating: 0, count: capacity * to)
        var produced = 0
        frames.withUnsafeBufferPointer { input in
            resampled.withUnsafeMutableBufferPointer { output in
                var consumed = 0
                while consumed < total, produced < capacity {
                    let step = resampler.process(
                        input.baseAddress! + consumed * to, frames: total - consumed,
                        into: output.baseAddress! + produced * to, capacity: capacity - produced)
                    consumed += step.consumed
                    produced += step.produced
                    if step.consumed == 0 && step.produced == 0 { break }
                }
                while case let tail = resampler.finish(
                    into: output.baseAddress! + produced * to, capacity: capacity - produced), tail > 0
                {
                    produced += tail
                }
            }
        }
        return Array(resampled.prefix(produced * to))
    }
}
