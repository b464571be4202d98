import Foundation
import Testing

@testable import AnnounceDaemon
@testable import AnnounceModel
@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// RUNTIME/media: what `announce play -` stores, who may delete it and when.
@Suite struct MediaDirectoryTests {
    private func withMedia(_ body: (RuntimeDirectory, MediaDirectory) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "/announce-media-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let runtime = try RuntimeDirectory.prepare(path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(runtime, MediaDirectory(runtime: runtime))
    }

    private func entries(_ media: MediaDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: media.path)) ?? []).sorted()
    }

    /// A pipe holding `bytes`, its write end closed: stdin as `store` reads it.
    private func pipe(_ bytes: [UInt8]) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        try #require(Glibc.pipe(&ends) == 0)
        _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        return ends[0]
    }

    @Test func storesAllOfItUnderAHexNameAndRefusesTooMuchOrNothingLeavingNothing() throws {
        try withMedia { _, media in
            let bytes = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let input = try pipe(bytes)
            defer { close(input) }
            let file = try media.store(from: input, label: "stdin", limit: 50_000)
            #expect(Clip.isValidMediaName(file.name) && file.name.count == 32)
            #expect(readWholeFile(file.path) == bytes)
            file.release()
            #expect(entries(media) == [file.name])

            let tooMuch = try pipe(bytes)
            defer { close(tooMuch) }
            #expect(
                throws: AnnounceError.undecodable(
                    path: "stdin",
                    reason: "more than 49999 bytes, the most announce takes from stdin; play a file instead")
            ) {
                _ = try media.store(from: tooMuch, label: "stdin", limit: 49_999)
            }
            let nothing = try pipe([])
            defer { close(nothing) }
            #expect(throws: AnnounceError.undecodable(path: "stdin", reason: "empty")) {
                _ = try media.store(from: nothing, label: "stdin", limit: 10)
            }
            #expect(entries(media) == [file.name], "the refused ones left nothing")
        }
    }

    @Test func theSweepKeepsReferencedAndLockedFilesAndDeletesTheRest() throws {
        try withMedia { _, media in
            func stored() throws -> MediaFile {
                let input = try pipe([1, 2, 3])
                defer { close(input) }
                return try media.store(from: input, label: "stdin", limit: 10)
            }
            let referenced = try stored()
            let held = try stored()
            let orphan = try stored()
            referenced.release()
            orphan.release()
            try [UInt8]("partial".utf8).withUnsafeBytes {
                try Data($0).write(to: URL(fileURLWithPath: media.path + "/.dead.tmp"))
            }
            #expect(media.sweep(keeping: [referenced.name]) == 2)
            #expect(
                entries(media) == [referenced.name, held.name].sorted(),
                "the held one is a client's, still waiting for its ack")
            held.discard()
            #expect(entries(media) == [referenced.name])
        }
    }

    /// The daemon deletes an item's media with its outcome, and at load what no item names.
    @Test func theSpoolDeletesMediaWithTheOutcomeAndOrphansAtLoad() throws {
        try withMedia { runtime, media in
            let spool = try Spool(runtime: runtime)
            func stored() throws -> String {
                let input = try pipe([1, 2, 3])
                defer { close(input) }
                let file = try media.store(from: input, label: "stdin", limit: 10)
                file.release()
                return file.name
            }
            let kept = try stored()
            let played = try stored()
            let orphan = try stored()
            for (id, name) in [(ItemID("0000000000e1"), kept), (ItemID("0000000000e2"), played)] {
                try spool.save(QueueItem(id: id, clip: Clip(path: Clip.stdinLabel, media: name), arrival: 1))
            }
            try spool.finish(
                QueueItem(id: "0000000000e2", clip: Clip(path: Clip.stdinLabel, media: played), arrival: 1),
                event: Event(time: 2, .finished(EventItem("0000000000e2"), outcome: Outcome(.played))))
            #expect(entries(media) == [kept, orphan].sorted())
            let restored = try Spool(runtime: runtime).load()
            #expect(restored.items.map(\.clip.media) == [kept])
            #expect(entries(media) == [kept])
            #expect(restored.problems.contains { $0.hasPrefix("removed 1 media file(s)") })
        }
    }
}
