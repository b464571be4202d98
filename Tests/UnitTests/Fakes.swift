import Synchronization

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

/// Frames from memory, as int16 or float, so engine tests know every sample. A `Source` as a
/// speech render or a stream will be: its length may be unknown, and it may refuse to seek.
final class MemorySource: Source, @unchecked Sendable {
    let name: String
    let format: SourceFormat
    let readableFormats: Set<SampleFormat>
    let samples: [Int16]
    /// False: the length is known only at the end (a live stream, a pipe).
    let lengthKnown: Bool
    let canSeek: Bool
    let resumption: Resumption
    /// A `.sentenceStart` source's sentences begin at these frames (and at 0).
    var sentenceStarts: [Int64] = []
    private var position = 0
    var failFirstRead = false
    /// Throws at this read (0-based), after earlier reads went to the device.
    var failAtRead: Int?
    var failSeeks = false
    /// Called at the start of each read with the number of reads before it.
    var onRead: ((Int) -> Void)?
    private var reads = 0
    /// Frames asked for in each read, in order.
    private(set) var asked: [Int] = []
    /// Frames sought to, in order.
    private(set) var seeks: [Int64] = []

    convenience init(name: String = "memory.wav", floats: [Float], channels: Int, rate: Int = 48_000) {
        self.init(
            name: name, samples: floats.map { Int16(($0 * 32_768).rounded()) }, channels: channels, rate: rate,
            floatOnly: true)
    }

    init(
        name: String = "memory.wav", samples: [Int16], channels: Int, rate: Int = 48_000, floatOnly: Bool = false,
        lengthKnown: Bool = true, canSeek: Bool = true, resumption: Resumption = .exactFrame, codec: Codec? = nil
    ) {
        self.name = name
        self.samples = samples
        format = SourceFormat(
            sampleRate: rate, channels: channels, exactSampleFormat: floatOnly ? .float32 : .int16, codec: codec)
        readableFormats = floatOnly ? [.float32] : [.float32, .int16]
        self.lengthKnown = lengthKnown
        self.canSeek = canSeek
        self.resumption = resumption
    }

    func resumeFrame(forHeard frame: Int64) -> Int64 {
        precondition(resumption == .sentenceStart, "asked only of a source that resumes at a sentence")
        return sentenceStarts.last { $0 <= frame } ?? 0
    }

    var duration: SourceDuration { lengthKnown ? .exact(Int64(samples.count / format.channels)) : .unknown }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError) -> Int {
        onRead?(reads)
        reads += 1
        asked.append(frames)
        if failFirstRead || failAtRead == reads - 1 { throw .undecodable(path: name, reason: "broken on purpose") }
        let channels = self.format.channels
        let count = min(frames, samples.count / channels - position)
        for i in 0..<count * channels {
            let sample = samples[position * channels + i]
            switch format {
            case .int16: buffer.storeBytes(of: sample, toByteOffset: i * 2, as: Int16.self)
            case .float32: buffer.storeBytes(of: Float(sample) / 32_768, toByteOffset: i * 4, as: Float.self)
            case .int32: buffer.storeBytes(of: Int32(sample) << 16, toByteOffset: i * 4, as: Int32.self)
            }
        }
        position += count
        return count
    }

    func seek(toFrame frame: Int64) throws(AnnounceError) {
        precondition(canSeek, "the engine seeks only what can seek")
        if failSeeks { throw .undecodable(path: name, reason: "cannot seek") }
        seeks.append(frame)
        position = Int(frame)
    }
}

/// Records every frame written, as the device format says.
final class CapturingOutput: AudioOutput, @unchecked Sendable {
    let deviceName: DeviceName = "capture"
    let format: OutputFormat
    let periodFrames: Int
    let bufferFrames: Int
    /// Set by a test to pretend the device recovered from underruns.
    var recoveries = 0
    /// Set by a test to pretend a sound server's plugin.
    var mixedByServer = false
    private let captured = Mutex<[UInt8]>([])
    private let drains = Atomic<Int>(0)
    /// Fails the write after this many frames, like an unplugged device.
    var failAfterFrames: Int?
    /// Called before each write; lets a test act mid-clip.
    var beforeWrite: ((Int) -> Void)?
    /// Called as the device drains (a play's end); lets a test act then.
    var onDrain: (() -> Void)?
    private var framesSoFar = 0

    init(format: OutputFormat, periodFrames: Int = 64) {
        self.format = format
        self.periodFrames = periodFrames
        bufferFrames = periodFrames * 4
    }

    /// Takes one period per write, so a clip needs many writes.
    func writableFrames() throws(OutputFailure) -> Int { periodFrames }

    func write(_ samples: UnsafeRawPointer, frames: Int) throws(OutputFailure) -> Int {
        beforeWrite?(framesSoFar)
        if let limit = failAfterFrames, framesSoFar + frames > limit {
            throw OutputFailure(code: 19, operation: "write")
        }
        framesSoFar += frames
        let bytes = UnsafeRawBufferPointer(start: samples, count: frames * format.bytesPerFrame)
        captured.withLock { $0.append(contentsOf: bytes) }
        return frames
    }

    func waitUntilWritable() throws(OutputFailure) {}
    func waitForInterrupt(milliseconds: Int) -> Bool { false }
    func interrupt() {}
    func close() {}

    func delay() -> Int { 0 }
    func drain() throws(OutputFailure) {
        onDrain?()
        drains.add(1, ordering: .relaxed)
    }
    func drop() {}

    var drainCount: Int { drains.load(ordering: .relaxed) }

    var int16Samples: [Int16] {
        captured.withLock { bytes in bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } }
    }

    var floatSamples: [Float] {
        captured.withLock { bytes in bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) } }
    }
}

/// An engine whose device is a CapturingOutput taking only `formats`.
func makeEngine(
    formats: Set<SampleFormat> = [.int16, .float32], periodFrames: Int = 64,
    configure: @escaping (CapturingOutput) -> Void = { _ in }
)
    -> (PlaybackEngine, () -> [CapturingOutput])
{
    let opened = Mutex<[CapturingOutput]>([])
    let engine = PlaybackEngine(device: "capture") { _, request throws(AnnounceError) in
        guard let format = request.sampleFormats.first(where: formats.contains) else {
            throw .deviceUnavailable(device: "capture", reason: "no format")
        }
        let output = CapturingOutput(
            format: OutputFormat(
                sampleFormat: format, sampleRate: request.sampleRate,
                channels: request.channels), periodFrames: periodFrames)
        configure(output)
        opened.withLock { $0.append(output) }
        return output
    }
    return (engine, { opened.withLock { $0 } })
}

/// A deterministic stereo or mono test signal that never repeats within its length.
func ramp(frames: Int, channels: Int) -> [Int16] {
    (0..<frames * channels).map { Int16(truncatingIfNeeded: ($0 * 37) % 60_000 - 30_000) }
}

/// Deterministic randomness for the shuffles and the seeded random walks.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
