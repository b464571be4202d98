/// Interleaved float frames waiting to be read, on a decode thread (it allocates as it grows).
struct FrameFIFO {
    let channels: Int
    private var samples: [Float] = []
    private var offset = 0

    init(channels: Int) { self.channels = channels }

    var frames: Int { (samples.count - offset) / channels }

    mutating func append(_ frames: UnsafePointer<Float>, count: Int) {
        samples.append(contentsOf: UnsafeBufferPointer(start: frames, count: count * channels))
    }

    /// Up to `frames` frames into `output`; how many.
    mutating func read(into output: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let count = min(frames, self.frames)
        guard count > 0 else { return 0 }
        samples.withUnsafeBufferPointer { samples in
            output.update(from: samples.baseAddress! + offset, count: count * channels)
        }
        offset += count * channels
        if offset == samples.count { removeAll() }
        return count
    }

    mutating func removeAll() {
        samples.removeAll(keepingCapacity: true)
        offset = 0
    }
}
