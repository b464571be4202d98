import AnnounceModel
import AnnounceSources
import AnnounceSystem
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A live stream as a source, over segments a test makes (WAV in pipes), without a network:
/// segments joined, the --duration counted across plays, a change of format, bytes that are not
/// audio, a failed first connection, and a stop while waiting.
@Suite struct StreamSourceTests {
    /// 16-bit mono PCM WAV of `seconds` of a ramp, whole.
    static func wav(seconds: Double, rate: Int = 8000) -> [UInt8] {
        let frames = Int(seconds * Double(rate))
        func le(_ value: Int, _ bytes: Int) -> [UInt8] {
            (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        var bytes =
            Array("RIFF".utf8) + le(36 + frames * 2, 4) + Array("WAVEfmt ".utf8) + le(16, 4) + le(1, 2) + le(1, 2)
        bytes += le(rate, 4) + le(rate * 2, 4) + le(2, 2) + le(16, 2) + Array("data".utf8) + le(frames * 2, 4)
        for frame in 0..<frames { bytes += le((frame % 200) * 100 - 10000, 2) }
        return bytes
    }

    /// Hands out `segments` (each written whole into a pipe: they fit), then the end or `failure`;
    /// with `hang`, waits after them until stopped.
    final class FakeInput: LiveInput, @unchecked Sendable {
        private let segments: Mutex<[[UInt8]]>
        private let failure: AnnounceError?
        private let hang: Bool
        private let contentType: String?
        private let stopped = CountingSemaphore()
        private let isStopped = Atomic<Bool>(false)

        init(
            _ segments: [[UInt8]], failure: AnnounceError? = nil, hang: Bool = false, contentType: String? = "audio/wav"
        ) {
            self.segments = Mutex(segments)
            self.failure = failure
            self.hang = hang
            self.contentType = contentType
        }

        func nextSegment() throws(AnnounceError) -> LiveSegment? {
            if isStopped.load(ordering: .acquiring) { throw StreamSource.stopped }
            if let bytes = segments.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw .internal("pipe") }
                _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
                close(ends[1])
                return LiveSegment(
                    head: Array(bytes.prefix(LiveSegment.headLength)), fd: ends[0], contentType: contentType,
                    startsConnection: true)
            }
            if let failure { throw failure }
            if hang {
                stopped.wait()
                throw StreamSource.stopped
            }
            return nil
        }

        func stop() {
            isStopped.store(true, ordering: .releasing)
            stopped.signal()
        }
    }

    /// Every frame the source gives until its end, read in blocks of 1000.
    static func readAll(_ source: StreamSource) throws(AnnounceError) -> [Float] {
        var samples: [Float] = []
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 1000)
        defer { block.deallocate() }
        while true {
            let got = try source.read(into: block, frames: 1000, as: .float32)
            if got == 0 { return samples }
            samples += UnsafeBufferPointer(start: block, count: got)
        }
    }

    static let stream = LiveStream(url: "http://radio/live.wav")

    @Test func segmentsPlayOneAfterAnotherUntilTheInputEnds() throws {
        let input = FakeInput([Self.wav(seconds: 1), Self.wav(seconds: 1)])
        let source = try StreamSource(stream: Self.stream, input: input)
        #expect(source.format.sampleRate == 8000 && source.format.channels == 1)
        #expect(!source.canSeek && source.resumption == .liveRejoin && source.duration == .unknown)
        let samples = try Self.readAll(source)
        #expect(samples.count == 16000)
        #expect(samples[8000 + 1] == Float(1 * 100 - 10000) / 32768, "the second segment from its own first frame")
        #expect(source.warning == "reconnected 1 time")
    }

    @Test func theDurationCountsWhatEarlierPlaysHeard() throws {
        let stream = LiveStream(url: "http://radio/live.wav", seconds: 0.5)
        let source = try StreamSource(stream: stream, input: FakeInput([Self.wav(seconds: 1)]), heard: 1000)
        #expect(source.duration == .exact(4000))
        #expect(try Self.readAll(source).count == 3000)
    }

    @Test func aSegmentInAnotherFormatFailsTheStream() throws {
        let source = try StreamSource(
            stream: Self.stream, input: FakeInput([Self.wav(seconds: 1), Self.wav(seconds: 1, rate: 16000)]))
        #expect(
            throws: AnnounceError.undecodable(
                path: Self.stream.url,
                reason: "the stream changed from 8000 Hz mono to 16000 Hz mono; announce plays a stream in one format")
        ) {
            _ = try Self.readAll(source)
        }
    }

    @Test func aPageIsNotAudioAndAFailedConnectionIsItsFailure() {
        let page = Array("<!DOCTYPE html><html><body>gone</body></html>".utf8)
        #expect(throws: AnnounceError.undecodable(path: Self.stream.url, reason: "not audio (text/html)")) {
            _ = try StreamSource(stream: Self.stream, input: FakeInput([page], contentType: "text/html"))
        }
        let refused = AnnounceError.cannotOpen(path: Self.stream.url, reason: "HTTP 404 Not Found")
        #expect(throws: refused) { _ = try StreamSource(stream: Self.stream, input: FakeInput([], failure: refused)) }
    }

    @Test func theReconnectLimitPassingFailsTheReadsAfterTheAudio() throws {
        let gone = AnnounceError.cannotOpen(
            path: Self.stream.url, reason: "the stream dropped and did not come back within 2 s")
        let source = try StreamSource(stream: Self.stream, input: FakeInput([Self.wav(seconds: 1)], failure: gone))
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 8000)
        defer { block.deallocate() }
        var read = 0
        while read < 8000 { read += try source.read(into: block, frames: 8000 - read, as: .float32) }
        #expect(throws: gone) { _ = try Self.readAll(source) }
    }

    @Test func aStopEndsAWaitForTheFirstConnection() async throws {
        let cancellation = Cancellation()
        let input = FakeInput([], hang: true)
        let opening = Task { () throws -> Bool in
            _ = try StreamSource(stream: Self.stream, input: input, cancellation: cancellation)
            return true
        }
        cancellation.fire()
        await #expect(throws: StreamSource.stopped) { _ = try await opening.value }
    }
}
