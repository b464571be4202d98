import AnnounceModel
import AnnounceSystem
import Synchronization

/// A `StreamSource`'s decode thread: each segment of the `LiveInput` through a decoder of its
/// own (a new connection, or a chained Ogg stream's next link, starts from its own headers)
/// into the `LiveBuffer`, waiting there while it is full. A segment whose bytes do not decode
/// is closed, which tells the sender to connect again. Ends at the input's end or failure, or
/// when stopped.
final class LiveDecoding: @unchecked Sendable {
    private var decoder: (any AudioDecoder)?
    private let input: any LiveInput
    private let buffer: LiveBuffer
    private let format: SourceFormat
    private let name: String
    private let stats: LiveStats
    /// Frames decoded at a time.
    private static let chunk = 2048

    init(
        decoder: any AudioDecoder, input: any LiveInput, buffer: LiveBuffer, format: SourceFormat, name: String,
        stats: LiveStats
    ) {
        self.decoder = decoder
        self.input = input
        self.buffer = buffer
        self.format = format
        self.name = name
        self.stats = stats
    }

    func run() {
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: Self.chunk * format.channels)
        defer { scratch.deallocate() }
        while true {
            if let current = decoder {
                // A segment that stops decoding ends like one whose bytes ran out.
                let got = (try? current.read(into: scratch, frames: Self.chunk, as: .float32)) ?? 0
                if got > 0 {
                    if !buffer.append(scratch, frames: got) { return }
                    continue
                }
                decoder = nil  // closes its pipe
            }
            let segment: LiveSegment?
            do {
                segment = try input.nextSegment()
            } catch {
                return buffer.finish(failure: error)
            }
            guard let segment else { return buffer.finish(failure: nil) }
            if segment.startsConnection { stats.reconnected() }
            guard
                let next = try? DecoderRegistry.open(
                    stream: segment.fd, head: segment.head, name: name,
                    contentType: segment.contentType)
            else { continue }
            let info = next.info
            guard info.sampleRate == format.sampleRate, info.channels == format.channels else {
                return buffer.finish(
                    failure: .undecodable(
                        path: name,
                        reason:
                            "the stream changed from \(Self.describe(format.sampleRate, format.channels)) to \(Self.describe(info.sampleRate, info.channels)); announce plays a stream in one format"
                    ))
            }
            decoder = next
        }
    }

    private static func describe(_ rate: Int, _ channels: Int) -> String {
        "\(rate) Hz " + (channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) channels")
    }
}

/// What a live play went through, for its finished event.
final class LiveStats: Sendable {
    private let counts = Mutex<(reconnects: Int, silence: Int64)>((0, 0))

    var totals: (reconnects: Int, silence: Int64) { counts.withLock { $0 } }

    func reconnected() { counts.withLock { $0.reconnects += 1 } }

    func addSilence(_ frames: Int) { counts.withLock { $0.silence += Int64(frames) } }
}
