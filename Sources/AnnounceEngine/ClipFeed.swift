import AnnounceModel
import AnnounceSystem
import AnnounceOutput
/// The decode side's supply of ring frames: every pass of the source (`--loops`) in order,
/// resampled to the device's rate when it differs. Resampling runs across a loop's seam
/// (one stream), and its tail is flushed once, after the last pass.
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

    /// Frames asked of the source per read: a small first one, so the play starts at once.
    static let chunkFrames = 8192
    /// Frames per read once playing, when they go straight to the ring (no resampling): a WAV
    /// then takes an eighth of the reads (256 KB of 16-bit stereo; each read is a system call).
    static let directChunkFrames = 65536

    init(source: any Source, ringFormat: SampleFormat, resampler: Resampler?, loops: Int) {
        self.source = source
        channels = source.format.channels
        self.ringFormat = ringFormat  // float32 when resampling
        self.resampler = resampler
        scratch = resampler == nil ? nil : .allocate(capacity: Self.chunkFrames * channels)
        loopsLeft = loops
    }

    deinit { scratch?.deallocate() }

    /// Writes up to `room` frames to `destination`; returns how many (0 is possible while
    /// the resampler fills), or nil once the whole program is out.
    func fill(_ destination: UnsafeMutableRawPointer, room: Int) throws(AnnounceError) -> Int? {
        while true {
            guard let resampler, let scratch else {
                let chunk = framesThisPass == 0 || source.arrivesWhileRead ? Self.chunkFrames : Self.directChunkFrames
                let got = try source.read(into: destination, frames: min(room, chunk), as: ringFormat)
                if got > 0 {
                    framesThisPass += Int64(got)
                    framesDecoded += Int64(got)
                    return got
                }
                if try !nextPass() { return nil }
                continue
            }
            let output = destination.assumingMemoryBound(to: Float.self)
            if flushing {
                let tail = resampler.finish(into: output, capacity: room)
                return tail > 0 ? tail : nil
            }
            if pendingFrames == 0 {
                let got = try source.read(into: scratch, frames: Self.chunkFrames, as: .float32)
                if got == 0 {
                    if try !nextPass() { flushing = true }
                    continue
                }
                framesThisPass += Int64(got)
                framesDecoded += Int64(got)
                pendingFrames = got
                pendingOffset = 0
            }
            let step = resampler.process(scratch + pendingOffset * channels, frames: pendingFrames,
                                         into: output, capacity: room)
            pendingOffset += step.consumed
            pendingFrames -= step.consumed
            return step.produced
        }
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
