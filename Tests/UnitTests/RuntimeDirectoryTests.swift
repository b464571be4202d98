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

@Suite struct RuntimeDirectoryTests {
    @Test func explicitDirectoryWins() {
        let path = RuntimeDirectory.defaultPath(
            environment: { ["ANNOUNCE_RUNTIME_DIR": "/x", "XDG_RUNTIME_DIR": "/run/user/7"][$0] },
            isOwnDirectory: { _ in true })
        #expect(path == "/x")
    }

    @Test func xdgRuntimeDirectoryIsUsed() {
        let path = RuntimeDirectory.defaultPath(
            environment: { ["XDG_RUNTIME_DIR": "/run/user/7"][$0] },
            isOwnDirectory: { $0 == "/run/user/7" })
        #expect(path == "/run/user/7/announce")
    }

    /// `sudo -u` keeps the caller's XDG_RUNTIME_DIR; a logout leaves a stale one: neither is ours.
    @Test func anXDGRuntimeDirectoryNotOursIsPassedOver() {
        let path = RuntimeDirectory.defaultPath(
            environment: { ["XDG_RUNTIME_DIR": "/run/user/1000"][$0] }, isOwnDirectory: { _ in false })
        #expect(path == "/tmp/announce-\(getuid())")
    }

    /// cron has no XDG_RUNTIME_DIR: it must still find the login session's daemon.
    @Test func cronFindsTheLogindDirectory() {
        let path = RuntimeDirectory.defaultPath(
            environment: { _ in nil }, isOwnDirectory: { $0 == "/run/user/\(getuid())" })
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

    @Test func aRelativeExplicitDirectoryIsAUsageError() {
        #expect(throws: AnnounceError.usage("ANNOUNCE_RUNTIME_DIR must be an absolute path, not 'run/x'")) {
            try RuntimeDirectory.prepare(environment: { ["ANNOUNCE_RUNTIME_DIR": "run/x"][$0] })
        }
    }

    @Test func aRelativeXDGRuntimeDirectoryIsIgnored() {
        let path = RuntimeDirectory.defaultPath(
            environment: { ["XDG_RUNTIME_DIR": "run"][$0] }, isOwnDirectory: { _ in false })
        #expect(path == "/tmp/announce-\(getuid())")
    }

    @Test func aSymlinkIsCalledASymlink() throws {
        let path = "/tmp/announce-rtd-link-\(getpid())"
        symlink("/tmp", path)
        defer { unlink(path) }
        #expect(
            throws: AnnounceError.unavailable(
                "runtime directory \(path) is a symlink, not a directory; refusing to use it (set ANNOUNCE_RUNTIME_DIR to a private directory of yours)"
            )
        ) {
            try RuntimeDirectory.prepare(path)
        }
    }

    @Test func looseModeAndForeignOwnerNameTheFix() throws {
        let path = "/tmp/announce-rtd-fix-\(getpid())"
        mkdir(path, 0o700)
        chmod(path, 0o750)
        defer { rmdir(path) }
        do {
            _ = try RuntimeDirectory.prepare(path)
            Issue.record("a 0750 directory was accepted")
        } catch {
            #expect(
                error.description.contains("chmod 700 \(path)") && error.description.contains("ANNOUNCE_RUNTIME_DIR"),
                "\(error)")
        }
    }

    /// Another user took /tmp/announce-UID (as a directory, file, FIFO or symlink): we fall back
    /// to a private directory in our home, say so once, and find it again on the next call.
    @Test(arguments: ["directory", "file", "fifo", "symlink"])
    func aSquattedTmpDirectoryFallsBackToHome(kind: String) throws {
        let home = "/tmp/announce-rtd-home-\(getpid())-\(kind)"
        mkdir(home, 0o700)
        defer { try? FileManager.default.removeItem(atPath: home) }
        // The squatted name, stood in for by a path of our own.
        let squatted = home + "/squatted"
        switch kind {
        case "directory":
            mkdir(squatted, 0o777)
            chmod(squatted, 0o777)
        case "file": close(open(squatted, O_CREAT | O_WRONLY, 0o644))
        case "fifo": mkfifo(squatted, 0o666)
        default: symlink("/tmp", squatted)
        }
        // Another user's (root can give it away; a directory must be someone else's to be squatted).
        if getuid() == 0 { lchown(squatted, 65534, 65534) }
        var info = stat()
        try #require(lstat(squatted, &info) == 0)
        try #require(kind != "directory" || info.st_uid != getuid(), "a directory of someone else's needs root")
        let environment: (String) -> String? = { ["HOME": home][$0] }
        let fallback = try #require(RuntimeDirectory.squatFallbackPath(environment: environment))
        var warnings: [String] = []
        let runtime = try RuntimeDirectory.prepareShared(squatted, fallback: fallback, warn: { warnings.append($0) })
        #expect(fallback.hasPrefix(home + "/.cache/announce/run-"))
        #expect(runtime.path == fallback)
        #expect(RuntimeDirectory.isOwnDirectory(fallback))
        #expect(lstat(fallback, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(warnings.count == 1 && warnings[0].contains(squatted) && warnings[0].contains(fallback), "\(warnings)")
        // The next client (or the daemon) resolves the same directory, without a second warning.
        let again = try RuntimeDirectory.prepareShared(squatted, fallback: fallback, warn: { warnings.append($0) })
        #expect(again.path == fallback && warnings.count == 1)
    }
}
