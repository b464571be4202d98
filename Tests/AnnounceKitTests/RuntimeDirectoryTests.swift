@testable import AnnounceKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct RuntimeDirectoryTests {
    @Test func explicitDirectoryWins() {
        let path = RuntimeDirectory.defaultPath(environment: { ["ANNOUNCE_RUNTIME_DIR": "/x", "XDG_RUNTIME_DIR": "/run/user/7"][$0] },
                                                isOwnDirectory: { _ in true })
        #expect(path == "/x")
    }

    @Test func xdgRuntimeDirectoryIsUsed() {
        let path = RuntimeDirectory.defaultPath(environment: { ["XDG_RUNTIME_DIR": "/run/user/7"][$0] }, isOwnDirectory: { _ in false })
        #expect(path == "/run/user/7/announce")
    }

    /// cron has no XDG_RUNTIME_DIR: it must still find the login session's daemon.
    @Test func cronFindsTheLogindDirectory() {
        let path = RuntimeDirectory.defaultPath(environment: { _ in nil }, isOwnDirectory: { $0 == "/run/user/\(getuid())" })
        #expect(path == "/run/user/\(getuid())/announce")
    }

    @Test func fallsBackToTmp() {
        let path = RuntimeDirectory.defaultPath(environment: { _ in nil }, isOwnDirectory: { _ in false })
        #expect(path == "/tmp/announce-\(getuid())")
    }

    @Test func refusesADirectoryOpenToOthers() throws {
        let path = "/tmp/announce-rtd-test-\(getpid())"
        mkdir(path, 0o755)
        chmod(path, 0o755)
        defer { rmdir(path) }
        #expect(throws: AnnounceError.self) { try RuntimeDirectory.prepare(path) }
        chmod(path, 0o700)
        #expect(try RuntimeDirectory.prepare(path).path == path)
    }
}
