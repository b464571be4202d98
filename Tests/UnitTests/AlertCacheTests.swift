import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

@Suite struct AlertCacheTests {
    @Test func aRepeatedAlertIsNotDecodedAgainUntilTheFileChanges() throws {
        let clip = try InProcessDaemonTests.writeClip(frames: 4_800)
        defer { unlink(clip.path) }
        let cache = AlertCache()
        func samples() throws -> [Float] {
            let decoder = try cache.decoder(for: FileName(clip.path))
            var buffer = [Float](repeating: 0, count: 4_800 * 2)
            let got = try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
            return Array(buffer.prefix(got * 2))
        }
        let first = try samples()
        #expect(first == clip.samples.map { Float($0) / 32_768 })
        #expect(try samples() == first)
        #expect(cache.decodes.load(ordering: .relaxed) == 1, "the second came from the cache")
        // Same size, new content and mtime: decoded again.
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, clip.path, &times, 0) == 0)
        _ = try samples()
        #expect(cache.decodes.load(ordering: .relaxed) == 2)
    }

    @Test func anAlertTooLargeToCacheIsRefusedBeforeItIsDecoded() throws {
        // 25 s of 8 channels at 96 kHz: a 38 MB file that would take 77 MB as float.
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        let bytes = UInt32(25 * 96_000 * 8 * 2)
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36) + bytes)
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(8))
        append(UInt32(96_000))
        append(UInt32(96_000 * 16))
        append(UInt16(16))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(bytes)
        data.append(Data(count: Int(bytes)))
        let path = NSTemporaryDirectory() + "announce-large-\(UUID().uuidString).wav"
        try data.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        do {
            _ = try AlertCache.decode(FileName(path))
            Issue.record("expected a refusal")
        } catch {
            #expect(error.exitCode == 65)
            #expect(
                error.description.hasPrefix(path) && error.description.contains("more than an alert's 64 MiB decoded"),
                "\(error)")
        }
    }

    /// A FIFO (or a device node) named as a clip is refused at once; a blocking open would hang.
    @Test func aFIFOIsRefusedWithoutHanging() throws {
        let path = NSTemporaryDirectory() + "announce-fifo-\(UUID().uuidString).wav"
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        #expect(throws: AnnounceError.cannotOpen(path: path, reason: "not a regular file")) {
            try DecoderRegistry.open(path)
        }
        #expect(throws: AnnounceError.cannotOpen(path: path, reason: "not a regular file")) {
            try AlertCache().decoder(for: FileName(path))
        }
    }
}
