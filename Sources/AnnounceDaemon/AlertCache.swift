import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// System sounds decoded once (AudioServicesCreateSystemSoundID's idea): the
/// PCM of each alert file, keyed by path, mtime and size, so a repeated
/// `announce alert` starts without opening a decoder. Bounded by total bytes;
/// the least recently used sounds go first.
final class AlertCache: @unchecked Sendable {
    /// 64 MiB: five 30 s stereo 48 kHz sounds, or hundreds of usual chimes; one alert may take it all.
    static let capacityBytes = SystemSound.maxDecodedBytes

    private struct Key: Hashable {
        var path: FileName
        var modified: timespec
        var size: Int64

        static func == (a: Key, b: Key) -> Bool {
            a.path == b.path && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(path)
            hasher.combine(size)
            hasher.combine(modified.tv_sec)
            hasher.combine(modified.tv_nsec)
        }
    }

    private struct Entry {
        var sound: DecodedSound
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Decodes done so far (a hit costs none), for tests and `status`.
    let decodes = Atomic<Int>(0)

    /// A decoder over the sound's PCM, decoding the file first when it is new or changed.
    func decoder(for file: FileName) throws(AnnounceError) -> any AudioDecoder {
        var status = stat()
        guard file.withCString({ stat($0, &status) }) == 0 else {
            throw .cannotOpen(path: file.text, reason: errno == ENOENT ? "no such file" : systemErrorMessage(errno))
        }
        let key = Key(path: file, modified: status.st_mtim, size: Int64(status.st_size))
        let cached = state.withLock { state -> DecodedSound? in
            state.clock += 1
            guard var entry = state.entries[key] else { return nil }
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.sound
        }
        if let cached { return SoundDecoder(cached) }
        let sound = try Self.decode(file)
        decodes.add(1, ordering: .relaxed)
        store(sound, key: key)
        return SoundDecoder(sound)
    }

    private func store(_ sound: DecodedSound, key: Key) {
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.sound.bytes }
            // Older versions of the same path are stale now.
            for (other, entry) in state.entries where other.path == key.path {
                state.entries[other] = nil
                state.bytes -= entry.sound.bytes
            }
            while state.bytes + sound.bytes > Self.capacityBytes,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.entries[oldest.key] = nil
                state.bytes -= oldest.value.sound.bytes
            }
            guard sound.bytes <= Self.capacityBytes else { return }
            state.entries[key] = Entry(sound: sound, lastUse: state.clock)
            state.bytes += sound.bytes
        }
    }

    /// The whole file as float PCM, refusing what is not an alert (the client checks first; the
    /// daemon never trusts it).
    static func decode(_ file: FileName) throws(AnnounceError) -> DecodedSound {
        let path = file.text
        let decoder = try DecoderRegistry.open(file)
        let info = decoder.info
        if let refusal = SystemSound.refusal(of: info, path: path) { throw refusal }
        // Within SystemSound's limits (30 s, 64 MiB as float), checked above.
        let limit = Int64(SystemSound.maxSeconds * Double(info.sampleRate))
        let capacity = Int(min(info.frames ?? limit, limit)) * info.channels
        var samples = [Float](repeating: 0, count: capacity)
        var filled = 0
        while filled < capacity {
            let got = try samples.withUnsafeMutableBufferPointer { buffer throws(AnnounceError) in
                try decoder.read(into: UnsafeMutableBufferPointer(rebasing: buffer[filled...]))
            }
            if got == 0 { break }
            filled += got * info.channels
        }
        // A header that promised more than came: keep only what decoded (removeLast keeps the capacity).
        if filled < capacity { samples = Array(samples[..<filled]) }
        var decoded = info
        decoded.frames = Int64(filled / info.channels)
        return DecodedSound(path: path, info: decoded, samples: samples, truncationWarning: decoder.truncationWarning)
    }
}

/// A whole sound in memory, float interleaved.
struct DecodedSound: Sendable {
    let path: String
    let info: AudioFileInfo
    let samples: [Float]
    let truncationWarning: String?

    var bytes: Int { samples.count * MemoryLayout<Float>.size }
}

/// Reads a decoded sound as if it were the file.
final class SoundDecoder: AudioDecoder {
    let sound: DecodedSound
    private var position = 0

    init(_ sound: DecodedSound) { self.sound = sound }

    var path: String { sound.path }
    var info: AudioFileInfo { sound.info }
    var readableFormats: Set<SampleFormat> { [.float32] }
    var truncationWarning: String? { sound.truncationWarning }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError) -> Int {
        precondition(format == .float32, "a decoded sound reads as float")
        let channels = sound.info.channels
        let count = min(frames, sound.samples.count / channels - position)
        guard count > 0 else { return 0 }
        sound.samples.withUnsafeBufferPointer { samples in
            buffer.copyMemory(from: samples.baseAddress! + position * channels, byteCount: count * channels * 4)
        }
        position += count
        return count
    }

    func seek(toFrame frame: Int64) throws(AnnounceError) {
        position = Int(min(max(0, frame), Int64(sound.samples.count / sound.info.channels)))
    }
}
