import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One sentence's 16-bit PCM: streamed from a speech engine as it renders (and copied into
/// the cache as it goes), or read back from the cache.
final class SentenceAudio {
    let header: WAVStreamHeader
    /// Frames, when known before reading (a cached render).
    let knownFrames: Int64?
    private let input: Input
    private var cacheWriter: CacheWriter?
    /// Bytes read but not yet handed out (a header's overshoot, half a frame).
    private var pending: [UInt8] = []
    private var ended = false
    /// Frames handed out so far: the sentence's length once `read` returns 0.
    private(set) var framesRead: Int64 = 0

    private enum Input {
        case engine(ChildProcess, program: String)
        case file(Int32)
    }

    /// How long an engine may write nothing before the render counts as failed.
    static let stallSeconds = 10.0

    /// Starts rendering `text` with the engine at `executable`, run as `command` says.
    init(
        rendering text: String, executable: String, program: String, command: SpeechCommand, cacheWriter: CacheWriter?,
        cancellation: Cancellation?, standby: EngineStandby?
    ) throws(AnnounceError) {
        let process: ChildProcess
        if let waiting = standby?.take(executable: executable, command: command) {
            process = waiting
            if let cancellation { process.attach(cancellation) }
            try process.send(Array(text.utf8))
        } else {
            process = try ChildProcess(
                executable: executable, arguments: command.arguments, input: Array(text.utf8),
                output: command.output == .wholeWAV ? .memoryFile : .pipe, cancellation: cancellation)
        }
        input = .engine(process, program: program)
        switch command.output {
        case .raw16(let sampleRate, let channels):
            header = WAVStreamHeader(sampleRate: sampleRate, channels: channels, dataBytes: 0)
        case .streamedWAV, .wholeWAV:
            var reader = Prefix()
            do {
                header = try WAVStreamHeader.read { count throws(AnnounceError) in try reader.next(count, from: process)
                }
            } catch {
                // No audio at all (it stalled, or wrote no WAV): it is ended, and what it said is the reason.
                process.terminate()
                throw Self.failure(of: process, program: program)
                    ?? .programFailed(program: program, reason: error.description)
            }
            pending = reader.leftover
        }
        knownFrames = nil
        self.cacheWriter = cacheWriter
        // Audio is coming: the next render's engine starts meanwhile.
        standby?.prepare(executable: executable, command: command)
    }

    /// A cached render at `path`.
    init(cached path: String) throws(AnnounceError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: systemErrorMessage(errno)) }
        var bytes = [UInt8](repeating: 0, count: WAVStreamHeader.canonicalSize)
        let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        var offset = 0
        let parsed = try? WAVStreamHeader.read { count in
            defer { offset += count }
            return Array(bytes[min(offset, max(0, got))..<min(offset + count, max(0, got))])
        }
        guard let parsed, offset == WAVStreamHeader.canonicalSize else {
            close(fd)
            throw .undecodable(path: path, reason: "not a cached render")
        }
        header = parsed
        knownFrames = Int64(parsed.dataBytes) / Int64(parsed.channels * 2)
        input = .file(fd)
    }

    deinit {
        if case .file(let fd) = input { close(fd) }
    }

    var frameBytes: Int { header.channels * 2 }

    /// Reads up to `frames` whole frames into `buffer`; 0 once the sentence has ended (and an
    /// engine's render has been checked and cached).
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(AnnounceError) -> Int {
        guard !ended else { return 0 }
        let wanted = frames * frameBytes
        var have = min(pending.count, wanted)
        if have > 0 {
            pending.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: have) }
            pending.removeFirst(have)
        }
        while have == 0 || have % frameBytes != 0 {
            let got = try readInput(into: buffer + have, count: wanted - have)
            if got == 0 {
                let whole = have / frameBytes * frameBytes  // a partial last frame is dropped
                cacheWriter?.append(UnsafeRawBufferPointer(start: buffer, count: whole))
                try finish()
                framesRead += Int64(whole / frameBytes)
                return whole / frameBytes
            }
            have += got
        }
        cacheWriter?.append(UnsafeRawBufferPointer(start: buffer, count: have))
        framesRead += Int64(have / frameBytes)
        return have / frameBytes
    }

    private func readInput(into buffer: UnsafeMutableRawPointer, count: Int) throws(AnnounceError) -> Int {
        switch input {
        case .file(let fd):
            while true {
                let got = Glibc.read(fd, buffer, count)
                if got < 0 && errno == EINTR { continue }
                if got < 0 { throw .internal("reading a cached render: \(systemErrorMessage(errno))") }
                return got
            }
        case .engine(let process, let program):
            do {
                return try process.read(into: buffer, count: count, stallSeconds: Self.stallSeconds)
            } catch {
                process.terminate()
                throw .programFailed(program: program, reason: "stalled: no audio for \(Int(Self.stallSeconds)) s")
            }
        }
    }

    /// The input ended: an engine must have exited 0, and then its render is cached.
    private func finish() throws(AnnounceError) {
        ended = true
        guard case .engine(let process, let program) = input else { return }
        if let failure = Self.failure(of: process, program: program) {
            cacheWriter = nil
            throw failure
        }
        cacheWriter?.commit(sampleRate: header.sampleRate, channels: header.channels)
        cacheWriter = nil
    }

    /// Why an engine's render failed once it ended, or nil when it exited 0.
    private static func failure(of process: ChildProcess, program: String) -> AnnounceError? {
        let said = process.errorLine.map { ": \($0)" } ?? ""
        switch process.wait() {
        case .exited(0): return nil
        case .exited(let code): return .programFailed(program: program, reason: "exited with status \(code)\(said)")
        case .signalled(let signal):
            return .programFailed(program: program, reason: "crashed (signal \(signal))\(said)")
        }
    }

    /// Reads a header's bytes off a pipe, keeping what comes after it.
    private struct Prefix {
        var buffered: [UInt8] = []
        var leftover: [UInt8] { buffered }

        mutating func next(_ count: Int, from process: ChildProcess) throws(AnnounceError) -> [UInt8] {
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            defer { chunk.deallocate() }
            while buffered.count < count {
                let got = try process.read(
                    into: chunk.baseAddress!, count: chunk.count, stallSeconds: SentenceAudio.stallSeconds)
                if got == 0 { break }
                buffered += chunk[0..<got]
            }
            let taken = Array(buffered.prefix(count))
            buffered.removeFirst(taken.count)
            return taken
        }
    }
}
