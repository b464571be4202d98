import CPosix
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The daemon's listening socket")
struct SocketListenTests {
    /// The process's umask as the kernel reports it, without setting it (umask(2) would).
    static func processUmask() -> String? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("Umask:") }.map(String.init)
    }

    /// The umask is the whole process's: changed around bind(2), it gave a file or directory
    /// another thread made meanwhile that mode (seen: a test's scratch directory made 0600,
    /// which another user could not enter).
    @Test("it has exactly the mode asked for, and the process's umask never changes meanwhile")
    func modeWithoutTheUmask() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("listen-\(UUID())").path
        try #require(mkdir(directory, 0o700) == 0)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let before = try #require(Self.processUmask())
        let running = Atomic<Bool>(true)
        let seen = Mutex<Set<String>>([])
        let watched = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var values: Set<String> = []
            while running.load(ordering: .relaxed) { Self.processUmask().map { _ = values.insert($0) } }
            seen.withLock { $0 = values }
            watched.signal()
        }
        for index in 0..<400 {
            let path = directory + "/socket-\(index)"
            let mode: mode_t = index.isMultiple(of: 2) ? 0o600 : 0o660
            let fd = announce_unix_listen(path, 4, mode)
            #expect(fd >= 0)
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == mode, "\(path)")
            close(fd)
            unlink(path)
        }
        running.store(false, ordering: .relaxed)
        #expect(watched.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == [before])
    }
}
