import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `announce say` as a `Source`: the text rendered a sentence at a time by a speech engine run
/// as a program, streamed as it renders (the first frame plays while the engine still
/// works), the next sentence's render started while one plays. Sentences are what an
/// interrupted utterance resumes at (`.sentenceStart`) and what the drop-after rule counts.
/// Each finished render goes into the cache, so a repeated announcement, or one resumed
/// after a restart, renders nothing again.
public final class SpeechSource: Source {
    public let name: String
    public let format: SourceFormat
    private let speech: Speech
    private let sentences: [String]
    private let cache: SpeechCache?
    /// The engine and how it is run, found when a render is first needed.
    private var engine: EngineSetup?
    /// Frames of each sentence, once known (rendered, or cached).
    private var lengths: [Int64?]
    private var current: (index: Int, audio: SentenceAudio)?
    /// The next sentence's render, started early so it is ready when this one ends.
    private var upcoming: (index: Int, audio: SentenceAudio)?
    private let cancellation: Cancellation?
    private let standby: EngineStandby?
    /// Int16 frames on their way to a float32 read.
    private var scratch = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 0)

    /// Starts rendering the first sentence (or opens its cached render). Throws 69 when the
    /// engine is not installed, 70 when it fails. `cancellation`: the play's stop, which kills
    /// the engine a read waits on.
    public init(
        speech: Speech, cache: SpeechCache?, cancellation: Cancellation? = nil,
        standby: EngineStandby? = nil
    ) throws(AnnounceError) {
        self.cancellation = cancellation
        self.standby = standby
        self.speech = speech
        sentences = speech.sentences
        self.cache = cache
        name = speech.label
        lengths = Array(repeating: nil, count: sentences.count)
        guard !sentences.isEmpty else { throw .usage("\(speech.label): nothing to say") }
        let first = try Self.open(
            0, sentences: sentences, speech: speech, cache: cache, engine: &engine, cancellation: cancellation,
            standby: standby)
        format = SourceFormat(
            sampleRate: first.header.sampleRate, channels: first.header.channels, exactSampleFormat: .int16)
        lengths[0] = first.knownFrames
        current = (0, first)
        // Sentences rendered before: their lengths are known at once (and with all of them, the whole).
        if let cache, let build = engine?.build {
            for index in sentences.indices.dropFirst() {
                guard
                    let path = cache.lookup(
                        SpeechCache.key(speech: speech, engineBuild: build, sentence: sentences[index])),
                    let audio = try? SentenceAudio(cached: path)
                else { continue }
                lengths[index] = audio.knownFrames
            }
        }
    }

    deinit { scratch.deallocate() }

    public var readableFormats: Set<SampleFormat> { [.float32, .int16] }

    public var duration: SourceDuration {
        var total: Int64 = 0
        for length in lengths {
            guard let length else { return .unknown }
            total += length
        }
        return .exact(total)
    }

    public var canSeek: Bool { true }
    public var resumption: Resumption { .sentenceStart }

    public func resumeFrame(forHeard frame: Int64) -> Int64 {
        (try? sentence(containing: frame))?.start ?? 0
    }

    public func heardFraction(forHeard frame: Int64) -> Double? {
        // The sentences heard to their end, of all of them.
        var end: Int64 = 0
        for index in sentences.indices {
            guard let length = lengths[index] else { return Double(index) / Double(sentences.count) }
            end += length
            if end > frame { return Double(index) / Double(sentences.count) }
        }
        return 1
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int
    {
        while let (index, audio) = current {
            let got: Int
            if format == .int16 {
                got = try audio.read(into: buffer, frames: frames)
            } else {
                let samples = frames * self.format.channels
                if scratch.count < samples {
                    scratch.deallocate()
                    scratch = .allocate(capacity: samples)
                }
                got = try audio.read(into: UnsafeMutableRawPointer(scratch.baseAddress!), frames: frames)
                let out = buffer.assumingMemoryBound(to: Float.self)
                for sample in 0..<(got * self.format.channels) { out[sample] = Float(scratch[sample]) / 32768 }
            }
            if got > 0 {
                startUpcoming(after: index)
                return got
            }
            lengths[index] = audio.framesRead
            try advance(past: index)
        }
        return 0
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        upcoming = nil
        current = nil
        let (index, start) = try sentence(containing: frame)
        guard index < sentences.count else {
            // At or past the end: only `--start` asks for that (a resume never goes there). The
            // length is known only now, so here is where `--start`'s one rule is applied (64).
            let rate = format.sampleRate
            if frame > 0,
                let problem = PlaybackOptions.startProblem(
                    TimeSpan(seconds: Double(frame) / Double(rate)),
                    sampleRate: rate, frames: start, name: name)
            {
                throw problem
            }
            return
        }
        let audio = try open(index)
        current = (index, audio)
        // A seek into a sentence (--start) skips its first frames; resumes land on its start.
        var skip = frame - start
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: 4096 * audio.frameBytes, alignment: 2)
        defer { chunk.deallocate() }
        while skip > 0 {
            let got = try audio.read(into: chunk, frames: Int(min(skip, 4096)))
            if got == 0 { break }
            skip -= Int64(got)
        }
    }

    /// The sentence `frame` falls in and its first frame; (count, total) past the end. Renders
    /// (into the cache) sentences whose length is not yet known.
    private func sentence(containing frame: Int64) throws(AnnounceError) -> (index: Int, start: Int64) {
        var start: Int64 = 0
        for index in sentences.indices {
            let length = try length(of: index)
            if frame < start + length { return (index, start) }
            start += length
        }
        return (sentences.count, start)
    }

    private func length(of index: Int) throws(AnnounceError) -> Int64 {
        if let length = lengths[index] { return length }
        let audio = try open(index)
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: 4096 * audio.frameBytes, alignment: 2)
        defer { chunk.deallocate() }
        while try audio.read(into: chunk, frames: 4096) > 0 {}
        lengths[index] = audio.framesRead
        return audio.framesRead
    }

    /// The sentence after `index` becomes current; its length is now known.
    private func advance(past index: Int) throws(AnnounceError) {
        current = nil
        guard index + 1 < sentences.count else { return }
        let next: SentenceAudio
        if let upcoming, upcoming.index == index + 1 { next = upcoming.audio } else { next = try open(index + 1) }
        upcoming = nil
        current = (index + 1, next)
    }

    private func startUpcoming(after index: Int) {
        guard upcoming == nil, index + 1 < sentences.count else { return }
        upcoming = (try? open(index + 1)).map { (index + 1, $0) }
    }

    private func open(_ index: Int) throws(AnnounceError) -> SentenceAudio {
        let audio = try Self.open(
            index, sentences: sentences, speech: speech, cache: cache, engine: &engine, cancellation: cancellation,
            standby: standby)
        guard audio.header.sampleRate == format.sampleRate, audio.header.channels == format.channels else {
            throw .programFailed(
                program: speech.engine.program, reason: "sentence \(index + 1) came out in another format")
        }
        if let frames = audio.knownFrames { lengths[index] = frames }
        return audio
    }

    private static func open(
        _ index: Int, sentences: [String], speech: Speech, cache: SpeechCache?,
        engine: inout EngineSetup?, cancellation: Cancellation?,
        standby: EngineStandby?
    ) throws(AnnounceError) -> SentenceAudio {
        if engine == nil { engine = try EngineSetup.find(for: speech) }
        let key = engine.map { SpeechCache.key(speech: speech, engineBuild: $0.build, sentence: sentences[index]) }
        if let key, let path = cache?.lookup(key), let audio = try? SentenceAudio(cached: path) { return audio }
        guard let engine else {
            throw speech.engine.notInstalled
        }
        return try SentenceAudio(
            rendering: sentences[index], executable: engine.path, program: speech.engine.program,
            command: engine.command, cacheWriter: key.flatMap { cache?.writer(for: $0) },
            cancellation: cancellation, standby: standby)
    }
}

/// A speech engine ready to render: its program, its command line (with the voice model it
/// needs, found), and its build for the cache key.
struct EngineSetup {
    let path: String
    /// The program's path, size and modification time, and its voice model's: an upgraded
    /// engine or a replaced model renders anew.
    let build: String
    let command: SpeechCommand

    /// nil when the engine is not installed; 69 when it needs a voice model that is not.
    static func find(for speech: Speech) throws(AnnounceError) -> EngineSetup? {
        guard let path = ChildProcess.find(speech.engine.program), let build = stamp(path) else { return nil }
        guard speech.engine.needsModel else {
            return EngineSetup(path: path, build: build, command: speech.engine.command(for: speech, model: nil))
        }
        let model = try PiperVoices.resolve(speech, piper: path)
        return EngineSetup(
            path: path, build: build + ";" + (stamp(model.path) ?? model.path),
            command: speech.engine.command(for: speech, model: model))
    }

    private static func stamp(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(path):\(info.st_size):\(info.st_mtim.tv_sec)"
    }
}
