import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The spool across crashes and a full disk: what a restarted daemon's `load()` finds.
@Suite(.serialized) struct SpoolTests {
    /// A fresh runtime directory (0700) under `parent`, removed afterwards.
    private func withRuntime(in parent: String = NSTemporaryDirectory(), _ body: (RuntimeDirectory) throws -> Void)
        throws
    {
        let path = parent + "/announce-spool-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let runtime = try RuntimeDirectory.prepare(path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(runtime)
    }

    private func item(_ id: ItemID) -> QueueItem {
        QueueItem(id: id, clip: Clip(path: "/sounds/\(id).wav"), arrival: 1)
    }

    private func finished(_ id: ItemID) -> Event { Event(time: 2, .finished(EventItem(id), outcome: Outcome(.played))) }

    private func entries(_ path: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
    }

    @Test func aRequestInterruptedBeforeItsCommitIsDiscardedOnLoad() throws {
        try withRuntime { runtime in
            let spool = try Spool(runtime: runtime)
            try spool.save(item("0000000000a0"))  // an earlier, acknowledged request
            try spool.beginRequest(["0000000000a1", "0000000000a2", "0000000000a3"], key: "k1")
            try spool.save(item("0000000000a1"))
            try spool.save(item("0000000000a2"))
            // The daemon dies here: a restarted one loads what is on disk.
            let restored = try Spool(runtime: runtime).load()
            #expect(restored.items.map(\.id) == ["0000000000a0"])
            #expect(restored.problems == ["discarded 2 of 3 item(s) of a request interrupted before it was accepted"])
            #expect(entries(runtime.spoolPath) == ["0000000000a0.json"])
        }
    }

    /// Past 512 entries the load decodes on several threads: every item comes back whole (its
    /// speech, stream and handed files, kept out of line), a corrupt entry is set aside, and
    /// one with an outcome leaves.
    @Test func aLargeSpoolLoadsEveryItemWhole() throws {
        try withRuntime { runtime in
            let spool = try Spool(runtime: runtime)
            var saved: [ItemID: QueueItem] = [:]
            for n in 0..<700 {
                var queued = item(ItemID(String(format: "%012x", 0xc000 + n)))
                switch n % 4 {
                case 1: queued.clip.speech = Speech(text: "item \(n)", engine: .espeakNG, voice: "en")
                case 2: queued.clip.stream = LiveStream(url: "http://127.0.0.1/\(n)", seconds: Double(n))
                case 3: queued.clip.handed = HandedFiles(audio: n, chime: nil, chimeAfter: n + 1)
                default: break
                }
                try spool.save(queued)
                saved[queued.id] = queued
            }
            let corrupt = runtime.spoolPath + "/00000000c001.json"
            try Data("{\"id\":".utf8).write(to: URL(fileURLWithPath: corrupt))
            // Its outcome written, the daemon died before the entry went.
            try spool.finish(saved["00000000c002"]!, event: finished("00000000c002"))
            try spool.save(saved["00000000c002"]!)
            let restored = try Spool(runtime: runtime).load()
            #expect(restored.items.count == 698)
            for loaded in restored.items { #expect(loaded == saved[loaded.id]) }
            #expect(restored.problems == ["\(corrupt): unreadable spool entry, moved to 00000000c001.json.corrupt"])
            #expect(entries(runtime.spoolPath).contains("00000000c001.json.corrupt"))
            #expect(!entries(runtime.spoolPath).contains("00000000c002.json"))
        }
    }

    @Test func aCommittedRequestLoadsWhole() throws {
        try withRuntime { runtime in
            let spool = try Spool(runtime: runtime)
            try spool.beginRequest(["0000000000b1", "0000000000b2"], key: "k2")
            try spool.save(item("0000000000b1"))
            try spool.save(item("0000000000b2"))
            spool.commitRequest()  // the reply would go here
            spool.endRequest()
            let restored = try Spool(runtime: runtime).load()
            #expect(Set(restored.items.map(\.id)) == ["0000000000b1", "0000000000b2"])
            #expect(restored.problems.isEmpty)
            #expect(restored.committed == nil, "answered: nothing for a resend")
        }
    }

    @Test func aRequestCommittedButNotAnsweredLoadsWithItsKeyAndEveryIdInOrder() throws {
        try withRuntime { runtime in
            let spool = try Spool(runtime: runtime)
            try spool.beginRequest(["0000000000c3", "0000000000c1", "0000000000c2"], key: "8f3a")
            try spool.save(item("0000000000c3"))
            try spool.save(item("0000000000c1"))  // c2 ended before the commit (silenced): no entry
            spool.commitRequest()
            // The daemon dies before the reply: the next one learns the whole request, once.
            let restored = try Spool(runtime: runtime).load()
            #expect(Set(restored.items.map(\.id)) == ["0000000000c1", "0000000000c3"])
            #expect(
                restored.committed?.key == "8f3a"
                    && restored.committed?.ids == ["0000000000c3", "0000000000c1", "0000000000c2"])
            #expect(try Spool(runtime: runtime).load().committed == nil)
        }
    }

    /// Injected fault: the outcomes directory is gone, so the outcome write fails.
    @Test func aPlayedItemLeavesTheSpoolEvenWhenItsOutcomeCannotBeWritten() throws {
        try withRuntime { runtime in
            let spool = try Spool(runtime: runtime)
            try spool.save(item("0000000000c1"))
            try FileManager.default.removeItem(atPath: runtime.outcomesPath)
            #expect(throws: AnnounceError.self) {
                try spool.finish(item("0000000000c1"), event: finished("0000000000c1"))
            }
            #expect(entries(runtime.spoolPath).isEmpty)
            #expect(try Spool(runtime: runtime).load().items.isEmpty, "a restart would play it again")
        }
    }

    /// A real full disk: a 64 KiB tmpfs filled to the last byte.
    @Test(.enabled(if: getuid() == 0, "needs root to mount a small tmpfs (skipped: not root)"))
    func onAFullDiskEnqueueFailsClearlyAndAPlayedItemStillLeaves() throws {
        let mountPoint = NSTemporaryDirectory() + "/announce-full-\(getpid())"
        mkdir(mountPoint, 0o700)
        try #require(
            mount("tmpfs", mountPoint, "tmpfs", 0, "size=64k,mode=0700") == 0,
            "mount tmpfs: \(String(cString: strerror(errno)))")
        defer {
            umount(mountPoint)
            rmdir(mountPoint)
        }
        try withRuntime(in: mountPoint) { runtime in
            let spool = try Spool(runtime: runtime)
            try spool.save(item("0000000000d1"))
            // Fill what is left (tmpfs counts pages: a byte-by-byte tail gets the last one).
            let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o600)
            defer { close(filler) }
            let block = [UInt8](repeating: 0, count: 4096)
            while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
            while block.withUnsafeBytes({ write(filler, $0.baseAddress, 1) }) > 0 {}

            do {
                try spool.save(item("0000000000d2"))
                Issue.record("a save on a full disk succeeded")
            } catch {
                #expect("\(error)".contains("No space left on device"), "\(error)")
            }
            #expect(throws: AnnounceError.self) {
                try spool.finish(item("0000000000d1"), event: finished("0000000000d1"))
            }
            #expect(!entries(runtime.spoolPath).contains("0000000000d1.json"), "played: its entry must go")
            #expect(try Spool(runtime: runtime).load().items.isEmpty)

            // Space returns: the spool works again.
            ftruncate(filler, 0)
            try spool.save(item("0000000000d3"))
            #expect(try Spool(runtime: runtime).load().items.map(\.id) == ["0000000000d3"])
        }
    }
}
