import AnnounceModel
import AnnounceOutput
import AnnounceSystem

/// The decode side's supply of ring frames: the chime (`prelude`), every pass of the source
/// (`--loops`) in order, then the closing tone (`coda`), resampled to the device's rate when it
/// differs. Resampling runs across every seam (one stream), and its tail is flushed once, at
/// the end. The chimes are float frames in the source's rate and channels: a play with one has
/// a float ring.
final class ClipFeed {
    private let source: any Source
    private let channels: Int
    private let ringFormat: SampleFormat
    private let resampler: Resampler?
    /// Decoded float frames waiting for the resampler.
    private let scratch: UnsafeMutablePointer<Float>?
    private var pendingOffset = 0
    private var pendingFrames = 0
    private var flushing = false
    private var loopsLeft: Int
    private var framesThisPass: Int64 = 0
    /// Source frames read over every pass: once the program is out, what it lasts.
    private(set) var framesDecoded: Int64 = 0
    private let prelude: [Float]
    private let coda: [Float]
    /// Frames of the chime given, and of the closing tone.
    private var preludeGiven = 0
    private var codaGiven = 0
    private var programEnded = false
    /// Reads copy the file's samples (linear PCM, all there, no stage): they may be large.
    private let readsStraight: Bool

    /// Frames asked of the source by a pass's first read: few, so the play starts at once (the
    /// loudness stage's limiter, a resampler or a decoder work through them before the first frame).
    /// Each later read asks for as many as the pass has given, which are then waiting to be played.
    static let firstReadFrames = 2048
    /// Frames per read at most, but for a file's own PCM: decoded, through a stage, resampled or
    /// arriving while read.
    static let chunkFrames = 8192
    /// Frames per read at most when they go straight from the file to the ring (linear PCM, no
    /// stage, no resampling): a WAV then takes an eighth of the reads (256 KB of 16-bit stereo;
    /// each read is a system call). Others stay at `chunkFrames`: a stop is seen between reads,
    /// and 65536 frames of MP3, or through the loudness stage, take up to 9 ms.
    static let directChunkFrames = 65536

    /// How many frames the next read asks for, at most `limit`.
    private func readFrames(limit: Int) -> Int {
        min(limit, max(Self.firstReadFrames, Int(clamping: framesThisPass)))
    }

    init(
        source: any Source, ringFormat: SampleFormat, resampler: Resampler?, loops: Int, prelude: [Float] = [],
        coda: [Float] = []
    ) {
        self.source = source
        channels = source.format.channels
        self.ringFormat = ringFormat  // float32 when resampling or chiming
        precondition(ringFormat == .float32 || prelude.isEmpty && coda.isEmpty, "chimes go to a float ring")
        self.resampler = resampler
        readsStraight =
            !(source is any WrappingSource) && !source.arrivesWhileRead && source.format.codec?.isLinearPCM == true
        scratch = resampler == nil ? nil : .allocate(capacity: Self.chunkFrames * channels)
        loopsLeft = loops
        self.prelude = prelude
        self.coda = coda
    }

    deinit { scratch?.deallocate() }

    /// Frames of the chime before the program, in the source's rate.
    var preludeFrames: Int { prelude.count / channels }

    /// Writes up to `room` frames to `destination`; returns how many (0 is possible while
    /// the resampler fills), or nil once the whole program is out.
    func fill(_ destination: UnsafeMutableRawPointer, room: Int) throws(AnnounceError) -> Int? {
        while true {
            guard let resampler, let scratch else {
                let limit = readsStraight ? Self.directChunkFrames : Self.chunkFrames
                return try input(into: destination, frames: min(room, readFrames(limit: limit)), as: ringFormat)
            }
            let output = destination.assumingMemoryBound(to: Float.self)
            if flushing {
                let tail = resampler.finish(into: output, capacity: room)
                return tail > 0 ? tail : nil
            }
            if pendingFrames == 0 {
                guard let got = try input(into: scratch, frames: readFrames(limit: Self.chunkFrames), as: .float32)
                else {
                    flushing = true
                    continue
                }
                pendingFrames = got
                pendingOffset = 0
            }
            let step = resampler.process(
                scratch + pendingOffset * channels, frames: pendingFrames,
                into: output, capacity: room)
            pendingOffset += step.consumed
            pendingFrames -= step.consumed
            return step.produced
        }
    }

    /// The next frames in order: the chime's, the program's, the closing tone's; nil at the end.
    private func input(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int?
    {
        if preludeGiven < preludeFrames {
            return copy(prelude, from: &preludeGiven, into: buffer, frames: frames)
        }
        while !programEnded {
            let got = try source.read(into: buffer, frames: frames, as: format)
            if got > 0 {
                framesThisPass += Int64(got)
                framesDecoded += Int64(got)
                return got
            }
            if try !nextPass() { programEnded = true }
        }
        guard codaGiven < coda.count / channels else { return nil }
        return copy(coda, from: &codaGiven, into: buffer, frames: frames)
    }

    private func copy(
        _ frames: [Float], from given: inout Int, into buffer: UnsafeMutableRawPointer, frames wanted: Int
    ) -> Int {
        let count = min(wanted, frames.count / channels - given)
        frames.withUnsafeBufferPointer { frames in
            buffer.assumingMemoryBound(to: Float.self).update(
                from: frames.baseAddress! + given * channels, count: count * channels)
        }
        given += count
        return count
    }

    /// Starts another pass, unless none is left or this one was empty (nothing would ever end).
    private func nextPass() throws(AnnounceError) -> Bool {
        guard loopsLeft != 0, framesThisPass > 0 else { return false }
        if loopsLeft > 0 { loopsLeft -= 1 }
        try source.seek(toFrame: 0)
        framesThisPass = 0
        return true
    }
}
