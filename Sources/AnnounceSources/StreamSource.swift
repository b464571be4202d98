import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play --stream URL` as a `Source` (DESIGN §4, Live streams): a thread of its own
/// (`announce-live`) decodes the `LiveInput`'s segments, a decoder per segment, into a
/// `LiveBuffer`, and reads take from it. Live: it cannot seek, and an interrupted play rejoins
/// it where it is now (`.liveRejoin`). While the network is late it plays silence rather than
/// hold up the device (other streams mix on it), paced by the wall clock so that an unpaced
/// device (a file) gets no more silence than the time that passed; the first frame waits for
/// `cushion` of audio. With a `--duration` it ends after that much, counted across plays.
public final class StreamSource: Source {
    public let name: String
    public let format: SourceFormat
    public let duration: SourceDuration
    public var readableFormats: Set<SampleFormat> { [.float32] }
    public var canSeek: Bool { false }
    public var resumption: Resumption { .liveRejoin }

    private let input: any LiveInput
    private let buffer: LiveBuffer
    private var decodeThread = pthread_t()
    private let cancellation: Cancellation?
    private var cancellationTokens: [Int?] = []
    /// Frames this play may still give (`--duration`); nil: no end of its own.
    private let limit: Int64?
    private var given: Int64 = 0
    /// When the first frame was given: frames given are heard about that much later at most.
    private var firstGiven: Double?
    private let stats: LiveStats

    /// Audio waited for before the first frame (for at most `cushionWait`), and the most the buffer holds.
    public static let cushion = 0.5
    static let cushionWait = 10.0
    public static let bufferSeconds = 4.0
    /// How close to running dry the play may come before silence fills in, and in what steps.
    static let lowWater = 0.2
    static let silenceStep = 0.02
    /// What reads throw once the play is stopped.
    public static let stopped = AnnounceError.internal("the stream was stopped")

    /// Opens the first segment (throwing its failure: 66 for the connection, 65 for bytes that
    /// are not audio), starts decoding and waits for the cushion. `heard`: frames of the item
    /// heard in earlier plays, which count against its `--duration`.
    public init(stream: LiveStream, input: any LiveInput, heard: Int64 = 0, cancellation: Cancellation? = nil)
        throws(AnnounceError)
    {
        name = stream.url
        self.input = input
        self.cancellation = cancellation
        // A stop while the first connection is made ends it at once.
        let connecting = cancellation?.register { input.stop() }
        let decoder: any AudioDecoder
        do throws(AnnounceError) {
            guard let first = try input.nextSegment() else {
                throw .undecodable(path: stream.url, reason: "the stream ended before any audio")
            }
            decoder = try DecoderRegistry.open(
                stream: first.fd, head: first.head, name: stream.url, contentType: first.contentType)
        } catch {
            cancellation?.remove(connecting)
            input.stop()
            throw error
        }
        let info = decoder.info
        format = SourceFormat(
            sampleRate: info.sampleRate, channels: info.channels, exactSampleFormat: .float32,
            container: info.container, codec: info.codec)
        let total = stream.frames(atRate: info.sampleRate)
        duration = total.map { .exact($0) } ?? .unknown
        limit = total.map { max(0, $0 - heard) }
        buffer = LiveBuffer(channels: info.channels, capacityFrames: Int(Self.bufferSeconds * Double(info.sampleRate)))
        stats = LiveStats()
        let buffer = buffer
        cancellationTokens = [connecting, cancellation?.register { buffer.stop() }]
        let worker = LiveDecoding(
            decoder: decoder, input: input, buffer: buffer, format: format, name: name, stats: stats)
        decodeThread = startThread(named: "announce-live") { worker.run() }
        buffer.waitForFrames(Int(Self.cushion * Double(info.sampleRate)), seconds: Self.cushionWait)
        if cancellation?.isFired == true { throw Self.stopped }
    }

    deinit {
        for token in cancellationTokens { cancellation?.remove(token) }
        input.stop()
        buffer.stop()
        pthread_join(decodeThread, nil)
    }

    public func read(into destination: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat)
        throws(AnnounceError) -> Int
    {
        precondition(format == .float32, "StreamSource reads float32 only")
        let wanted = limit.map { Int(min(Int64(frames), max(0, $0 - given))) } ?? frames
        if wanted == 0 { return 0 }
        let samples = destination.assumingMemoryBound(to: Float.self)
        let rate = Double(self.format.sampleRate)
        while true {
            let taken = buffer.take(into: samples, frames: wanted)
            if taken > 0 { return gave(taken) }
            switch buffer.end {
            case .success?: return 0
            case .failure(let error)?: throw error
            case nil: break
            }
            guard let firstGiven else {
                buffer.waitForFrames(seconds: nil)
                continue
            }
            // Frames given run ahead of the device by at most what they outlast the wall clock.
            let deadline = firstGiven + Double(given) / rate - Self.lowWater
            let now = SystemClock.monotonic()
            if now < deadline {
                buffer.waitForFrames(seconds: deadline - now)
                continue
            }
            let silence = min(wanted, max(1, Int(Self.silenceStep * rate)))
            samples.update(repeating: 0, count: silence * self.format.channels)
            stats.addSilence(silence)
            return gave(silence)
        }
    }

    private func gave(_ frames: Int) -> Int {
        if firstGiven == nil { firstGiven = SystemClock.monotonic() }
        given += Int64(frames)
        return frames
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        throw .usage("\(name): a live stream cannot seek")
    }

    /// Reconnections and the silence that filled in, for the finished event.
    public var warning: String? {
        let (reconnects, silence) = stats.totals
        var parts: [String] = []
        if reconnects > 0 { parts.append("reconnected \(reconnects) time\(reconnects == 1 ? "" : "s")") }
        if silence > 0 {
            let seconds = (Double(silence) / Double(format.sampleRate) * 10).rounded() / 10
            parts.append("\(seconds) s of silence while the stream was late")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
