import Foundation
import Testing

@testable import AnnounceModel
@testable import AnnounceSources

/// A decoder's cursor reads ahead of small reads on a whole file: the bytes and the end seen are
/// those of the file, whatever the reads' sizes and seeks.
struct InputCursorTests {
    private func withFile(_ bytes: [UInt8], _ body: (String) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "/announce-cursor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    private func read(_ cursor: InputCursor, _ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let got = out.withUnsafeMutableBytes { cursor.read(into: $0.baseAddress!, count: count) }
        return Array(out.prefix(max(0, got)))
    }

    @Test func smallReadsSeeksAndTheEndMatchTheFile() throws {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<(InputCursor.readAhead * 3 + 777)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        try withFile(bytes) { path in
            let cursor = InputCursor(try FileInput(path: path))
            var position = 0
            // Reads of a few hundred bytes across read-ahead boundaries, and one large read.
            for count in [209, 418, 1, 65_000, 40_000, 209, 100_000, 3] {
                let got = read(cursor, count)
                #expect(got == Array(bytes[position..<min(bytes.count, position + count)]))
                position += got.count
                #expect(cursor.position == Int64(position))
            }
            // Back into what was read ahead, then out of it.
            for target in [1000, Int64(InputCursor.readAhead) * 2 + 5, 10] {
                #expect(cursor.seek(Int64(target), whence: SEEK_SET) == Int64(target))
                #expect(read(cursor, 300) == Array(bytes[Int(target)..<Int(target) + 300]))
                #expect(!cursor.hitEnd)
            }
            // The end: a short read says so, and a read past it gets nothing.
            #expect(cursor.seek(-100, whence: SEEK_END) == Int64(bytes.count - 100))
            #expect(read(cursor, 400) == Array(bytes.suffix(100)))
            #expect(cursor.hitEnd)
            #expect(read(cursor, 10).isEmpty)
        }
    }
}
