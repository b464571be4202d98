import AnnounceEngine
import AnnounceModel
import AnnounceSources
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Brings each play to its loudness target (`LoudnessTarget`, DESIGN §4, Loudness) with one
/// gain, kept in `cache` by its file or its voice and the target, so a clip is measured once.
/// Unknown, its first `Loudness.openingSeconds` are measured before it plays (all of it, for
/// most announcements). Where the gain lifts peaks into the limiter, the opening is played
/// through it unheard and the loudness the limiter took is made up. A longer clip goes on being
/// measured as it plays, and its gain is kept once it has been read to its end. A download is
/// measured as it arrives, and played with what was measured in time. Runs on the play's
/// decode thread.
final class Leveler: Sendable {
    let cache: LoudnessCache
    /// Says what a clip measured (daemon.log), once per measurement.
    private let log: @Sendable (String) -> Void
    /// The opening kept in memory for the rehearsal, in samples (16 MB).
    static let rehearsalSamples = 1 << 22
    /// Rehearsals at most: the third lands within a tenth of a LU in practice.
    static let rehearsals = 3

    init(cache: LoudnessCache, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.cache = cache
        self.log = log
    }

    /// `source`, the clip of `item`, at `target`: itself when off; a live stream's gain follows it
    /// slowly. `reopen` makes the item's source again (a download's is measured on a twin).
    func level(
        _ source: any Source, of item: QueueItem, target: LoudnessTarget,
        reopen: @escaping @Sendable () throws(AnnounceError) -> any Source
    ) throws(AnnounceError) -> any Source {
        let plainFile =
            item.clip.speech == nil && item.clip.media == nil && item.clip.url == nil && item.clip.stream == nil
        let file = item.clip.file
        let twin: @Sendable () throws(AnnounceError) -> any Source = { () throws(AnnounceError) -> any Source in
            try FileSource(file: file)
        }
        let key = target.lufs.flatMap { Self.key(of: item, target: $0) }
        return try level(source, key: key, target: target, twin: plainFile ? twin : item.clip.url != nil ? reopen : nil)
    }

    /// `source` at `target`, its gain kept by `key` (nil: measured each time). `twin` opens the
    /// same audio again: a long opening is then measured in two halves side by side.
    func level(
        _ source: any Source, key: String?, target: LoudnessTarget,
        twin: (@Sendable () throws(AnnounceError) -> any Source)? = nil
    ) throws(AnnounceError) -> any Source {
        guard let lufs = target.lufs else { return source }
        if source.resumption == .liveRejoin {
            let meter = try LoudnessMeter(
                channels: source.format.channels, sampleRate: source.format.sampleRate, full: false)
            return LeveledSource(source, following: lufs) { frames, count in
                (try? meter.add(frames, count: count)) == nil ? nil : meter.shortTerm
            }
        }
        guard source.canSeek else { return source }
        if let key, let gain = cache.gain(for: key) { return LeveledSource(source, gain: gain) }
        let format = source.format
        let began = SystemClock.monotonic()
        let meter = try LoudnessMeter(channels: format.channels, sampleRate: format.sampleRate, full: false)
        var opening = Opening(format: format)
        var meters = [meter]
        if source.arrivesWhileRead, let twin,
            let arrived = ArrivingOpening.measure(twin, format: format, limit: opening.limit)
        {
            // A download: what came by the deadline, measured beside it; the play never waits on a slow server.
            (opening, meters) = (arrived.opening, [arrived.meter])
        } else if let twin, let total = source.duration.exactFrames,
            total >= Int64(Self.splitSeconds * Double(format.sampleRate))
        {
            // Two halves on two threads: the second on a source of its own, sought to the middle.
            let half = min(total, opening.limit) / 2
            let second = SecondHalf(format: format, from: half, until: opening.limit - half)
            let thread = startThread(named: "announce-level") { second.measure(twin) }
            try opening.read(source, into: meter, until: half)
            pthread_join(thread, nil)
            if let part = second.opening, let other = second.meter {
                opening.append(part)
                meters.append(other)
            } else {
                try opening.read(source, into: meter, until: opening.limit)  // the twin failed: on alone
            }
        } else {
            try opening.read(source, into: meter, until: opening.limit)
        }
        if !source.arrivesWhileRead || meters[0] === meter { try source.seek(toFrame: 0) }
        let measured = meters.count == 1 ? meters[0].measurement : LoudnessMeter.combined(meters)
        let makeUp = try opening.makeUp(gain: measured.gain(toward: lufs), target: lufs, source: source)
        let gain = measured.gain(toward: lufs) + makeUp
        let seconds = (Double(opening.frames) / Double(format.sampleRate) * 10).rounded() / 10
        log(
            "loudness of \(source.name): \(Self.text(measured.level)) LUFS\(opening.ended ? "" : " (its first \(seconds) s)"), "
                + "played at \(Self.text(gain, signed: true)) dB\(makeUp > 0 ? " (\(Self.text(makeUp, signed: true)) dB made up for the limiter)" : ""); "
                + "measured in \(Int(((SystemClock.monotonic() - began) * 1000).rounded())) ms")
        guard let key else { return LeveledSource(source, gain: gain) }
        if opening.ended {
            cache.store(gain: gain, for: key)
            return LeveledSource(source, gain: gain)
        }
        let rest = try Completion(measured: meters, format: format, key: key, cache: cache) {
            $0.gain(toward: lufs) + makeUp
        }
        return LeveledSource(source, gain: gain, tap: rest, tapFrom: opening.frames)
    }

    private static func text(_ value: Double?, signed: Bool = false) -> String {
        guard let value else { return "none" }
        let rounded = (value * 10).rounded() / 10
        return (signed && rounded >= 0 ? "+" : "") + "\(rounded)"
    }

    /// What a clip is kept by: its file as it is now, or its voice (every sentence of every
    /// utterance of one voice gets one gain); nil for what is played once (stdin, a download).
    static func key(of item: QueueItem, target: Double) -> String? {
        if let speech = item.clip.speech { return LoudnessCache.key(ofVoice: speech, target: target) }
        guard item.clip.media == nil, item.clip.url == nil, item.clip.stream == nil else { return nil }
        return LoudnessCache.key(of: item.clip.file, target: target)
    }

    /// A clip's first seconds: measured, and their sample peak. A download's are also kept, as
    /// many as fit, for the rehearsal; a file's are read again for it, the rare time it is needed
    /// (keeping 30 s of stereo cost every play 10 MB of fresh pages and their copies).
    private struct Opening {
        let format: SourceFormat
        let keeps: Bool
        var frames: Int64 = 0
        var ended = false
        var peak: Float = 0
        var kept: [Float] = []

        init(format: SourceFormat, keeps: Bool = false) {
            self.format = format
            self.keeps = keeps
        }

        /// Frames measured before a clip plays: one over the opening, so that a clip of exactly
        /// its length is seen to end, and kept.
        var limit: Int64 { Int64(Loudness.openingSeconds * Double(format.sampleRate)) + 1 }

        /// Reads `source` from where it is into `meter` until `frames` reaches `until` or it ends.
        mutating func read(_ source: any Source, into meter: LoudnessMeter, until limit: Int64) throws(AnnounceError) {
            let channels = format.channels
            let chunk = 4096
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunk * channels)
            defer { buffer.deallocate() }
            while frames < limit {
                let got = try source.read(
                    into: buffer.baseAddress!, frames: Int(min(Int64(chunk), limit - frames)), as: .float32)
                if got == 0 {
                    ended = true
                    return
                }
                try take(UnsafeBufferPointer(rebasing: buffer[0..<got * channels]), into: meter)
            }
        }

        /// Measures `samples`, interleaved, and keeps them for the rehearsal.
        mutating func take(_ samples: UnsafeBufferPointer<Float>, into meter: LoudnessMeter) throws(AnnounceError) {
            try meter.add(samples.baseAddress!, count: samples.count / format.channels)
            for sample in samples { peak = max(peak, abs(sample)) }
            if keeps && kept.count + samples.count <= Leveler.rehearsalSamples { kept.append(contentsOf: samples) }
            frames += Int64(samples.count / format.channels)
        }

        /// Another part's, measured after this one's.
        mutating func append(_ other: Opening) {
            frames += other.frames
            ended = other.ended
            peak = max(peak, other.peak)
        }

        /// The dB the limiter would take off at `gain`, played back through it: none when the
        /// peaks stay a dB clear of it (true peaks sit at most a little over sample peaks).
        /// `source`, at its start, is read again for it (and left there) unless this kept them.
        func makeUp(gain: Double, target: Double, source: any Source) throws(AnnounceError) -> Double {
            guard peak > 0, 20 * log10(Double(peak)) + gain > LeveledSource.defaultCeiling - 1 else { return 0 }
            let kept = keeps ? self.kept : try again(source)
            guard !kept.isEmpty else { return 0 }
            // Secant steps: each dB more lifts the clip by less, as more of it meets the limiter.
            var tried: (makeUp: Double, heard: Double)?
            var makeUp = 0.0
            for _ in 0..<Leveler.rehearsals {
                let meter = try LoudnessMeter(channels: format.channels, sampleRate: format.sampleRate, full: false)
                let tap = MeterTap(meter)
                kept.withUnsafeBufferPointer {
                    LeveledSource.rehearse($0, format: format, gain: gain + makeUp, into: tap)
                }
                guard let heard = meter.measurement.level, heard >= Loudness.silenceFloor else { break }
                if abs(target - heard) < 0.1 { break }
                let slope = tried.map { heard > $0.heard ? (heard - $0.heard) / (makeUp - $0.makeUp) : 1 } ?? 1
                tried = (makeUp, heard)
                makeUp += (target - heard) / max(slope, 0.2)
            }
            // Never more than the limiter could give back: past 6 dB it would only flatten the clip.
            return min(max(makeUp, 0), 6)
        }

        /// The opening's samples (as many as the rehearsal takes), read again from `source`'s
        /// start; `source` is left at its start.
        private func again(_ source: any Source) throws(AnnounceError) -> [Float] {
            let channels = format.channels
            let wanted = Int(min(frames, Int64(Leveler.rehearsalSamples / channels)))
            var samples = [Float](repeating: 0, count: wanted * channels)
            var got = 0
            try samples.withUnsafeMutableBufferPointer { buffer throws(AnnounceError) in
                while got < wanted {
                    let read = try source.read(
                        into: buffer.baseAddress! + got * channels, frames: min(65536, wanted - got), as: .float32)
                    if read == 0 { break }
                    got += read
                }
            }
            try source.seek(toFrame: 0)
            samples.removeSubrange((got * channels)...)
            return samples
        }
    }

    /// A clip's opening is measured in two halves from this length, seconds.
    static let splitSeconds = 4.0

    /// The second half of an opening, measured on a thread of its own from a source of its own.
    private final class SecondHalf: @unchecked Sendable {
        let format: SourceFormat
        let from: Int64
        let until: Int64
        private(set) var opening: Opening?
        private(set) var meter: LoudnessMeter?

        init(format: SourceFormat, from: Int64, until: Int64) {
            self.format = format
            self.from = from
            self.until = until
        }

        func measure(_ twin: () throws(AnnounceError) -> any Source) {
            do throws(AnnounceError) {
                let source = try twin()
                guard source.format == format else { return }
                let meter = try LoudnessMeter(channels: format.channels, sampleRate: format.sampleRate, full: false)
                try source.seek(toFrame: from)
                var part = Opening(format: format)
                try part.read(source, into: meter, until: until)
                (opening, self.meter) = (part, meter)
            } catch {
                return  // measured on the play's own thread instead
            }
        }
    }

    /// A download's opening, measured on a thread of its own from a twin of it as its bytes
    /// arrive: the play takes what was measured once `Loudness.arrivingOpeningWait` has passed
    /// with half a second of it measured (or all of it), and the thread, left behind, stops at
    /// its next read.
    private final class ArrivingOpening: @unchecked Sendable {
        private struct State {
            var opening: Opening
            var done = false
            var abandoned = false
        }
        private let state: Mutex<State>
        private let meter: LoudnessMeter
        private let progress = CountingSemaphore()

        private init(format: SourceFormat) throws(AnnounceError) {
            state = Mutex(State(opening: Opening(format: format, keeps: true)))
            meter = try LoudnessMeter(channels: format.channels, sampleRate: format.sampleRate, full: false)
        }

        /// What came of `twin`'s first `limit` frames in time, with its meter; nil when nothing could be measured.
        static func measure(
            _ twin: @escaping @Sendable () throws(AnnounceError) -> any Source, format: SourceFormat,
            limit: Int64
        ) -> (opening: Opening, meter: LoudnessMeter)? {
            guard let arriving = try? ArrivingOpening(format: format) else { return nil }
            let deadline = SystemClock.monotonic() + Loudness.arrivingOpeningWait
            pthread_detach(startThread(named: "announce-level") { arriving.read(twin, format: format, limit: limit) })
            let enough = Int64(format.sampleRate) / 2
            while true {
                let (frames, done) = arriving.state.withLock { ($0.opening.frames, $0.done) }
                let now = SystemClock.monotonic()
                if done || (frames >= enough && now >= deadline) { break }
                _ = arriving.progress.wait(seconds: frames >= enough ? deadline - now : 1)
            }
            // The thread adds nothing more: what it measured is the play's.
            let opening = arriving.state.withLock { state in
                state.abandoned = true
                return state.opening
            }
            return opening.frames > 0 ? (opening, arriving.meter) : nil
        }

        private func read(_ twin: () throws(AnnounceError) -> any Source, format: SourceFormat, limit: Int64) {
            defer {
                state.withLock { $0.done = true }
                progress.signal()
            }
            guard let source = try? twin(), source.format == format else { return }
            let chunk = 4096
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunk * format.channels)
            defer { buffer.deallocate() }
            while true {
                let frames = state.withLock { $0.abandoned ? limit : $0.opening.frames }
                guard frames < limit,
                    let got = try? source.read(
                        into: buffer.baseAddress!, frames: Int(min(Int64(chunk), limit - frames)), as: .float32)
                else { return }
                let more = state.withLock { state -> Bool in
                    guard !state.abandoned else { return false }
                    if got == 0 { state.opening.ended = true }
                    return got > 0
                        && (try? state.opening.take(
                            UnsafeBufferPointer(rebasing: buffer[0..<got * format.channels]), into: meter)) != nil
                }
                progress.signal()
                if !more { return }
            }
        }
    }

    /// Frames told to a meter.
    private final class MeterTap: SourceTap {
        let meter: LoudnessMeter
        init(_ meter: LoudnessMeter) { self.meter = meter }
        func take(_ frames: UnsafePointer<Float>, count: Int) { try? meter.add(frames, count: count) }
        func passEnded() {}
    }

    /// The rest of a long clip, measured as its first play reads it; its gain kept once read to its end.
    private final class Completion: SourceTap {
        /// The opening's meters, and the rest's (the one meter, when the opening had one).
        let earlier: [LoudnessMeter]
        let meter: LoudnessMeter
        let key: String
        let cache: LoudnessCache
        let gain: (Loudness) -> Double
        var failed = false

        init(
            measured: [LoudnessMeter], format: SourceFormat, key: String, cache: LoudnessCache,
            gain: @escaping (Loudness) -> Double
        ) throws(AnnounceError) {
            if measured.count == 1 {
                (earlier, meter) = ([], measured[0])
            } else {
                (earlier, meter) = (
                    measured, try LoudnessMeter(channels: format.channels, sampleRate: format.sampleRate, full: false)
                )
            }
            self.key = key
            self.cache = cache
            self.gain = gain
        }

        func take(_ frames: UnsafePointer<Float>, count: Int) {
            do throws(AnnounceError) { try meter.add(frames, count: count) } catch { failed = true }
        }

        func passEnded() {
            if !failed {
                cache.store(
                    gain: gain(earlier.isEmpty ? meter.measurement : LoudnessMeter.combined(earlier + [meter])),
                    for: key)
            }
        }
    }
}
