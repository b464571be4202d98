import Foundation
import Synchronization
import Testing

@testable import AnnounceModel
@testable import AnnounceSources
@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A download played while it arrives: the end-to-end tests' fixtures (Tests/Shell/make-fixtures.sh)
/// copied into a `GrowingFile` by a writer thread, as the daemon's downloader will, and decoded
/// through `GrowingInput` against the complete file. Three minutes: making the fixtures took
/// 54 s of the first test's time under the whole suite's load (6 s alone).
@Suite(.timeLimit(.minutes(3))) struct GrowingInputTests {
    static let failure = AnnounceError.cannotOpen(path: "http://host/clip", reason: "connection reset")

    /// Every float32 frame `source` gives from where it is to its end.
    static func decode(_ source: FileSource) throws -> [Float] {
        let channels = source.format.channels
        var all: [Float] = []
        var buffer = [Float](repeating: 0, count: 4_096 * channels)
        while case let got = try buffer.withUnsafeMutableBytes({
            try source.read(into: $0.baseAddress!, frames: 4_096, as: .float32)
        }), got > 0 {
            all += buffer[..<(got * channels)]
        }
        return all
    }

    /// MP3 (without an Info header: its length is counted on a reader of its own, which waits
    /// too), WAV and FLAC: the first frames come while no more than half the file is there. The
    /// writer holds at half until they have come, so the order proves it, not the timing.
    @Test(arguments: ["long-no-xing.mp3", "wav16-stereo.wav", "flac24.flac"])
    func aDownloadOfKnownLengthPlaysBeforeHalfOfItHasArrived(fixture: String) throws {
        let path = try Fixtures.path(fixture)
        let complete = try FileSource(path: path)
        let expected = try Self.decode(complete)
        let feeder = try Feeder(copying: path, lengthKnown: true)
        defer { feeder.remove() }
        feeder.start(holdingAt: feeder.size / 2, then: .finish)
        let source = try FileSource(input: GrowingInput(file: feeder.file, name: "http://host/\(fixture)"))
        var first = [Float](repeating: 0, count: 4_096 * source.format.channels)
        let got = try first.withUnsafeMutableBytes {
            try source.read(into: $0.baseAddress!, frames: 4_096, as: .float32)
        }
        #expect(got > 0)
        #expect(
            feeder.written <= feeder.size / 2 && !feeder.heldTooLong,
            "the first frames needed \(feeder.written) of \(feeder.size) bytes")
        feeder.release()
        let all = Array(first[..<(got * source.format.channels)]) + (try Self.decode(source))
        #expect(all.count == expected.count && all == expected, "the same samples as the complete file")
        #expect(source.name == "http://host/\(fixture)")
        #expect(source.format == complete.format && source.warning == complete.warning)
        #expect(source.settledDuration() == complete.settledDuration())
    }

    /// Whether the length is known or not (then what needs it waits for the end), each decodes
    /// as the complete file, damage and all: Ogg and CAF read their end at open, MP3s with Info
    /// headers or with junk or damage before their frames, FLACs cut or without a total.
    @Test(
        arguments: [
            "cbr128.mp3", "vbr.mp3", "wav24.wav", "flac16.flac", "flac.oga", "vorbis.ogg", "clip.caf",
            "damaged/junk-before.mp3", "damaged/damaged-head.mp3", "damaged/cut.wav", "damaged/cut.caf",
            "damaged/cut.flac", "damaged/zero-total.flac", "damaged/cut.ogg"
        ], [true, false])
    func aDownloadDecodesAsTheCompleteFile(fixture: String, lengthKnown: Bool) throws {
        let path = try Fixtures.path(fixture)
        try Self.expectSameDecode(path, lengthKnown: lengthKnown)
    }

    /// libmpg123 does not look at the end of a download for an ID3v1 tag; it skips the tag
    /// where it comes.
    @Test func anID3v1TagAtTheEndOfAnMP3DownloadIsNotPlayed() throws {
        let tagged = NSTemporaryDirectory() + "announce-id3v1-\(UUID().uuidString).mp3"
        defer { unlink(tagged) }
        let tag = Array("TAG".utf8) + Array("Title".utf8) + [UInt8](repeating: 0, count: 120)
        try Data(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("cbr128.mp3"))) + tag).write(
            to: URL(fileURLWithPath: tagged))
        try Self.expectSameDecode(tagged, lengthKnown: true)
    }

    /// `path` copied in as a download, decoded while it arrives: the same samples, format,
    /// warning and settled length as the file itself.
    static func expectSameDecode(_ path: String, lengthKnown: Bool) throws {
        let complete = try FileSource(path: path)
        let feeder = try Feeder(copying: path, lengthKnown: lengthKnown)
        defer { feeder.remove() }
        feeder.start(then: .finish)
        let source = try FileSource(input: GrowingInput(file: feeder.file))
        #expect(try decode(source) == decode(complete))
        #expect(source.format == complete.format && source.warning == complete.warning)
        #expect(source.settledDuration() == complete.settledDuration())
    }

    /// The download stops for good halfway: what is there plays, then the read throws its error.
    @Test(arguments: ["long-no-xing.mp3", "wav16-stereo.wav", "flac24.flac"])
    func aFailedDownloadFailsTheReadWithItsError(fixture: String) throws {
        let feeder = try Feeder(copying: try Fixtures.path(fixture), lengthKnown: true)
        defer { feeder.remove() }
        feeder.start(until: feeder.size / 2, then: .fail(Self.failure))
        let source = try FileSource(input: GrowingInput(file: feeder.file))
        #expect(throws: Self.failure) { try Self.decode(source) }
    }

    @Test func aDownloadThatFailsBeforeItsHeaderFailsTheOpen() throws {
        let feeder = try Feeder(copying: try Fixtures.path("wav16-stereo.wav"), lengthKnown: true)
        defer { feeder.remove() }
        feeder.start(until: 500, then: .fail(Self.failure))
        #expect(throws: Self.failure) { try FileSource(input: GrowingInput(file: feeder.file)) }
    }

    /// A read waiting for bytes that do not come ends when the play is stopped.
    @Test func aStopWakesAReadWaitingForTheDownload() throws {
        let feeder = try Feeder(copying: try Fixtures.path("wav16-stereo.wav"), lengthKnown: true)
        defer { feeder.remove() }
        feeder.start(until: feeder.size / 2, then: .stall)
        let stop = Cancellation()
        let source = try FileSource(input: GrowingInput(file: feeder.file, cancellation: stop))
        let readSome = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let unsafeSource = source  // read on one thread at a time: this one, then the reader
        let outcome = GrowingFileTests.onThread { () -> String in
            var buffer = [Float](repeating: 0, count: 4_096 * 2)
            do {
                while true {
                    let got = try buffer.withUnsafeMutableBytes {
                        try unsafeSource.read(into: $0.baseAddress!, frames: 4_096, as: .float32)
                    }
                    if got == 0 { return "ended" }
                    readSome.signal()
                }
            } catch {
                return "\(error)"
            }
        }
        #expect(readSome.wait(timeout: .now() + 10) == .success)
        stop.fire()
        #expect(outcome() == "\(feeder.file.path): stopped while waiting for its download")
    }

    /// A server that ignored a Range request: the file is rewritten from its start while it is
    /// read. Its bytes are the same, and so is what plays.
    @Test func aDownloadRewrittenFromItsStartPlaysTheSame() throws {
        let path = try Fixtures.path("wav16-stereo.wav")
        let expected = try Self.decode(FileSource(path: path))
        let feeder = try Feeder(copying: path, lengthKnown: true)
        defer { feeder.remove() }
        feeder.start(holdingAt: feeder.size * 3 / 5, then: .restart)
        let source = try FileSource(input: GrowingInput(file: feeder.file))
        var first = [Float](repeating: 0, count: 4_096 * 2)
        let got = try first.withUnsafeMutableBytes {
            try source.read(into: $0.baseAddress!, frames: 4_096, as: .float32)
        }
        feeder.release()
        #expect(Array(first[..<(got * 2)]) + (try Self.decode(source)) == expected)
    }
}

/// The fixtures the end-to-end tests use, made once per test process and removed at its exit.
enum Fixtures {
    static let directory: Result<String, FixtureError> = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = NSTemporaryDirectory() + "announce-unit-fixtures-\(getpid())"
        made = directory
        atexit {
            if let made = Fixtures.made { try? FileManager.default.removeItem(atPath: made) }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [root.appendingPathComponent("Tests/Shell/make-fixtures.sh").path, directory]
        let log = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = log
        do { try process.run() } catch {
            return .failure(FixtureError(description: "cannot run make-fixtures.sh: \(error)"))
        }
        let output = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(FixtureError(description: "make-fixtures.sh failed: \(output)"))
        }
        return .success(directory)
    }()

    static func path(_ name: String) throws -> String { try directory.get() + "/" + name }

    nonisolated(unsafe) private static var made: String?
}

struct FixtureError: Error, CustomStringConvertible { let description: String }

/// The downloader's part: copies a file into a `GrowingFile` on a thread of its own, a small
/// chunk at a time with a pause between, saying `grew` after each write.
final class Feeder: Sendable {
    enum Ending: Sendable {
        case finish
        case fail(AnnounceError)
        /// Nothing more comes, and nothing says so.
        case stall
        /// Truncated and written again from the start (a server ignoring a Range request), then finished.
        case restart
    }

    let file: GrowingFile
    let size: Int64
    private let bytes: [UInt8]
    private let fd: Int32
    private let progress = Mutex<(written: Int64, heldTooLong: Bool)>((0, false))
    private let gate = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(copying path: String, lengthKnown: Bool) throws {
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        size = Int64(bytes.count)
        let target = NSTemporaryDirectory() + "announce-download-\(UUID().uuidString)"
        fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FixtureError(description: "cannot create \(target)") }
        file = GrowingFile(path: target, expectedLength: lengthKnown ? size : nil)
    }

    var written: Int64 { progress.withLock { $0.written } }
    /// The writer stopped holding because `release` did not come within 10 s.
    var heldTooLong: Bool { progress.withLock { $0.heldTooLong } }

    /// Writes up to `end` (all of it when nil), waiting at `hold` for `release`, then ends so.
    func start(holdingAt hold: Int64? = nil, until end: Int64? = nil, then ending: Ending) {
        Thread.detachNewThread { [self] in
            write(to: end ?? size, holdingAt: hold)
            switch ending {
            case .finish: file.finish()
            case .fail(let error): file.fail(error)
            case .stall: break
            case .restart:
                ftruncate(fd, 0)
                file.grew(to: 0)
                write(to: size, holdingAt: nil)
                file.finish()
            }
            done.signal()
        }
    }

    func release() { gate.signal() }

    /// Waits for the writer, then removes the file.
    func remove() {
        release()
        _ = done.wait(timeout: .now() + 10)
        close(fd)
        unlink(file.path)
    }

    private func write(to end: Int64, holdingAt hold: Int64?) {
        var offset: Int64 = 0
        while offset < end {
            let stop = hold.map { $0 > offset ? min($0, end) : end } ?? end
            let count = Int(min(2_048, stop - offset))
            let wrote = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + Int(offset), count, off_t(offset)) }
            precondition(wrote == count, "short write to \(file.path)")
            offset += Int64(count)
            progress.withLock { $0.written = offset }
            file.grew(to: offset)
            if offset == hold, gate.wait(timeout: .now() + 10) == .timedOut {
                progress.withLock { $0.heldTooLong = true }
            }
            usleep(200)
        }
    }
}
