import Foundation
import Testing

/// `play --cache URL`: the daemon keeps the body in $XDG_CACHE_HOME/announce/downloads and asks
/// the server again with If-None-Match before playing a kept copy: a 304 plays the copy, a 200
/// (the file changed) replaces it. `announce cache` lists it (python's json reads the listing)
/// and `cache clear` deletes it. Tests/Servers/httpd.py logs what it was asked.
@Suite("play --cache URL: kept, revalidated, listed, cleared")
struct DownloadCacheTests {
    @Test(
        "the second play revalidates (304) and plays the kept copy bit for bit; a changed file is fetched again; --no-cache asks nothing"
    )
    func revalidates() async throws {
        let directory = try Harness.workResult.get().path + "/cached-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let served = directory + "/clip"
        try FileManager.default.copyItem(atPath: try Harness.fixture("cbr128.mp3"), toPath: served)
        let server = try HTTPTestServer(directory: directory, logging: true)
        defer { server.stop() }
        let home = directory + "/cache-home"
        let environment = URLTests.direct.merging(["XDG_CACHE_HOME": home]) { $1 }
        try await withDaemonRuntime { runtime in
            let url = server.url("clip")
            func play(_ options: [String], _ label: String) async throws -> Playback {
                try await runtime.playCapture(options + [url], label: "cache-\(label)", environment: environment)
            }
            func lastRequest() -> String { server.requests().last { $0.hasPrefix("GET ") } ?? "" }
            let mp3 = try await runtime.playCapture(
                [try Harness.fixture("cbr128.mp3")], label: "cache-mp3", environment: environment)
            let first = try await play(["--cache"], "first")
            try expectSameCapture(first, as: mp3, "first")
            #expect(lastRequest().hasSuffix("if-none-match=None -> 200"), "\(server.requests())")

            let listed = try await runtime.announce(["cache", "--json"], environment: environment)
            let size = try FileManager.default.attributesOfItem(atPath: served)[.size] as? Int ?? -1
            let check = try await Runner.run(
                "python3",
                [
                    "-c",
                    """
                    import json, sys
                    o = json.loads(sys.argv[1]); d = [c for c in o["caches"] if c["kind"] == "downloads"][0]
                    assert d["entries"] == 1 and d["bytes"] == int(sys.argv[2]), o
                    assert d["path"] == sys.argv[3] + "/announce/downloads", d
                    """, listed.stdout, "\(size)", home
                ])
            #expect(listed.status == 0 && check.status == 0, "\(listed) \(check)")

            let second = try await play(["--cache"], "second")
            try expectSameCapture(second, as: mp3, "second")
            #expect(
                lastRequest().contains("if-none-match=\"") && lastRequest().hasSuffix("-> 304"), "\(server.requests())")

            let uncached = try await play(["--no-cache"], "uncached")
            try expectSameCapture(uncached, as: mp3, "uncached")
            #expect(
                lastRequest().hasSuffix("if-none-match=None -> 200"),
                "--no-cache asked with a validator: \(server.requests())")

            // The server's file changes: the kept copy is stale, and the new body plays.
            try FileManager.default.removeItem(atPath: served)
            try FileManager.default.copyItem(atPath: try Harness.fixture("flac16.flac"), toPath: served)
            let flac = try await runtime.playCapture(
                [try Harness.fixture("flac16.flac")], label: "cache-flac", environment: environment)
            let changed = try await play(["--cache"], "changed")
            try expectSameCapture(changed, as: flac, "changed")
            #expect(
                lastRequest().contains("if-none-match=\"") && lastRequest().hasSuffix("-> 200"), "\(server.requests())")

            let cleared = try await runtime.announce(["cache", "clear"], environment: environment)
            #expect(cleared.status == 0 && cleared.stdout.contains("downloads: 1 download deleted"), "\(cleared)")
            #expect(!FileManager.default.fileExists(atPath: home + "/announce/downloads"))
            #expect(runtime.mediaEntries().isEmpty, "media left: \(runtime.mediaEntries())")
        }
    }
}
