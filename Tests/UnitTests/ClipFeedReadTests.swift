import Testing

@testable import AnnounceEngine
@testable import AnnounceModel

/// How much a play asks of its source per read: little at first (the first frame comes at once),
/// then as much as the pass has given; 65536 frames only where a read is a copy of the file's
/// PCM, 8192 where it decodes or runs through a stage (a stop is seen between reads).
@Suite struct ClipFeedReadTests {
    /// A stage that adds nothing: the feed sees a wrapped source.
    final class Stage: WrappingSource {
        let wrapped: any Source
        init(_ wrapped: any Source) { self.wrapped = wrapped }
        var format: SourceFormat { wrapped.format }
        var readableFormats: Set<SampleFormat> { wrapped.readableFormats }
        func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
            -> Int
        { try wrapped.read(into: buffer, frames: frames, as: format) }
        func seek(toFrame frame: Int64) throws(AnnounceError) { try wrapped.seek(toFrame: frame) }
        func sourceFrames(forRead frames: Int64) -> Int64 { frames }
    }

    /// What each read of a 10 s mono clip asked for, the feed given room for 100,000 frames.
    static func asked(codec: Codec?, staged: Bool = false) throws -> [Int] {
        let memory = MemorySource(samples: [Int16](repeating: 1, count: 480_000), channels: 1, codec: codec)
        let feed = ClipFeed(
            source: staged ? Stage(memory) : memory, ringFormat: .int16, resampler: nil, loops: 0)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 100_000 * 2, alignment: 16)
        defer { buffer.deallocate() }
        var frames = 0
        while let got = try feed.fill(buffer, room: 100_000) { frames += got }
        #expect(frames == 480_000, "every frame once")
        return memory.asked
    }

    @Test func aFilesPCMGrowsTo65536FramesARead() throws {
        let asked = try Self.asked(codec: .pcm(bits: 16, unsigned: false))
        #expect(Array(asked.prefix(8)) == [2048, 2048, 4096, 8192, 16384, 32768, 65536, 65536], "\(asked)")
    }

    @Test func decodedAudioIsReadAtMost8192FramesAtATime() throws {
        let asked = try Self.asked(codec: .mpeg(nil))
        #expect(Array(asked.prefix(5)) == [2048, 2048, 4096, 8192, 8192], "\(asked)")
        #expect(asked.max() == 8192)
    }

    @Test func pcmBehindAStageIsReadAtMost8192FramesAtATime() throws {
        let asked = try Self.asked(codec: .pcm(bits: 16, unsigned: false), staged: true)
        #expect(asked.first == 2048 && asked.max() == 8192, "\(asked)")
    }
}
