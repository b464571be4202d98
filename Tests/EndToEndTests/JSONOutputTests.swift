import Foundation
import Testing

/// Every `--json` output read back with Foundation's JSONSerialization and checked against
/// the field tables in docs/json.md: nothing printed that is not documented, and every field
/// documented as always present is there, with `v` 1.
@Suite("JSON outputs match docs/json.md")
struct JSONOutputTests {
    /// docs/json.md's tables: section name → (field → always present).
    static let documented: [String: [String: Bool]] = {
        guard
            let text = try? String(contentsOf: Harness.repoRoot.appendingPathComponent("docs/json.md"), encoding: .utf8)
        else { return [:] }
        var sections: [String: [String: Bool]] = [:]
        var section = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#") {
                section = String(line.drop { $0 == "#" }.drop { $0 == " " })
            } else if let row = line.wholeMatch(of: /\| `(\w+)` \| [^|]* \| (yes|no) \|.*/) {
                sections[section, default: [:]][String(row.1)] = row.2 == "yes"
            }
        }
        return sections
    }()

    /// Parses one JSON object (a real parser, not ours) and checks it against `section`.
    @discardableResult
    static func check(_ line: Substring, as section: String, sourceLocation: SourceLocation = #_sourceLocation)
        -> [String: Any]
    {
        let fields = documented[section] ?? [:]
        #expect(!fields.isEmpty, "docs/json.md has no table for \(section)", sourceLocation: sourceLocation)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
            Issue.record("not one JSON object: \(line)", sourceLocation: sourceLocation)
            return [:]
        }
        for key in object.keys {
            #expect(
                fields[key] != nil, "\(section): '\(key)' is printed but not in docs/json.md",
                sourceLocation: sourceLocation)
        }
        for (key, always) in fields where always {
            #expect(
                object[key] != nil, "\(section): '\(key)' is documented as always present: \(line)",
                sourceLocation: sourceLocation)
        }
        if fields["v"] != nil {
            #expect(object["v"] as? Int == 1, "\(section): v must be 1: \(line)", sourceLocation: sourceLocation)
        }
        return object
    }

    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    @Test("status and queue without a daemon: running false, v 1")
    func statusWithoutDaemon() async throws {
        let runtime = try Self.freshRuntimeDirectory()
        for command in ["status", "queue"] {
            let outcome = try await Runner.announce([command, "--json"], environment: ["ANNOUNCE_RUNTIME_DIR": runtime])
            #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
            let object = Self.check(Self.lines(outcome.stdout).first ?? "", as: "status")
            #expect(object["running"] as? Bool == false, "\(outcome.stdout)")
        }
    }

    @Test("play --no-wait --json, status and queue with items, then events, all as documented")
    func statusWithItems() async throws {
        let file = try Harness.fixture("wav16-stereo.wav")
        let tag = "json-\(UUID().uuidString.prefix(8))"
        let queued = try await Runner.announce([
            "play", "--no-wait", "--json", "--delay", "1h", "--tag", tag, "-d", "null", file, file
        ])
        #expect(queued.status == 0, "\(queued)")
        let ids = Self.check(Self.lines(queued.stdout).first ?? "", as: "ids")["ids"] as? [String] ?? []
        #expect(ids.count == 2)
        for command in ["status", "queue"] {
            let outcome = try await Runner.announce([command, "--json"])
            let object = Self.check(Self.lines(outcome.stdout).first ?? "", as: "status")
            #expect(object["running"] as? Bool == true)
            let scheduled = object["scheduled"] as? [[String: Any]] ?? []
            #expect(Set(ids).isSubset(of: scheduled.compactMap { $0["id"] as? String }), "\(outcome.stdout)")
            for item in scheduled {
                Self.check(
                    Substring(String(decoding: try JSONSerialization.data(withJSONObject: item), as: UTF8.self)),
                    as: "item")
            }
        }
        let cancelled = try await Runner.announce(["cancel", "--tag", tag])
        #expect(cancelled.status == 0, "\(cancelled)")
    }

    @Test("play --json prints each finished event as documented")
    func playEvents() async throws {
        let play = try await Runner.announce(["play", "--json", "-d", "null", try Harness.fixture("wav16-stereo.wav")])
        #expect(play.status == 0, "\(play)")
        let lines = Self.lines(play.stdout)
        #expect(lines.count == 1, "\(play.stdout)")
        for line in lines { #expect(Self.check(line, as: "events")["event"] as? String == "finished") }
    }

    @Test("info --json: one documented object per file")
    func info() async throws {
        let files = ["wav16-stereo.wav", "cbr128.mp3", "flac16.flac"]
        let outcome = try await Runner.announce(["info", "--json"] + (try files.map(Harness.fixture)))
        #expect(outcome.status == 0, "\(outcome)")
        let lines = Self.lines(outcome.stdout)
        #expect(lines.count == files.count, "\(outcome.stdout)")
        for line in lines { Self.check(line, as: "info") }
    }

    @Test("devices --json: one object with v and the devices as documented")
    func devices() async throws {
        let outcome = try await Runner.announce(["devices", "--json"])
        #expect(outcome.status == 0, "\(outcome)")
        let lines = Self.lines(outcome.stdout)
        #expect(lines.count == 1, "\(outcome.stdout)")
        let devices = Self.check(lines.first ?? "", as: "devices")["devices"] as? [[String: Any]] ?? []
        #expect(devices.contains { $0["name"] as? String == "null" }, "ALSA's null PCM is always there")
        for device in devices {
            let object = Self.check(
                Substring(String(decoding: try JSONSerialization.data(withJSONObject: device), as: UTF8.self)),
                as: "device")
            for holder in object["holders"] as? [[String: Any]] ?? [] {
                Self.check(
                    Substring(String(decoding: try JSONSerialization.data(withJSONObject: holder), as: UTF8.self)),
                    as: "holder")
            }
        }
    }

    @Test("cache --json: one object with v and the caches as documented")
    func cache() async throws {
        let home = try Harness.capturePath("cache-home") + ".d"
        let outcome = try await Runner.announce(["cache", "--json"], environment: ["XDG_CACHE_HOME": home])
        #expect(outcome.status == 0, "\(outcome)")
        let lines = Self.lines(outcome.stdout)
        #expect(lines.count == 1, "\(outcome.stdout)")
        let caches = Self.check(lines.first ?? "", as: "cache")["caches"] as? [[String: Any]] ?? []
        #expect(caches.map { $0["kind"] as? String } == ["speech", "downloads"], "\(outcome.stdout)")
        #expect(caches.allSatisfy { $0["entries"] as? Int == 0 }, "\(outcome.stdout)")
        for cache in caches {
            Self.check(
                Substring(String(decoding: try JSONSerialization.data(withJSONObject: cache), as: UTF8.self)),
                as: "cache entry")
        }
    }

    @Test("quiet --json as documented")
    func quiet() async throws {
        let runtime = try Self.freshRuntimeDirectory()
        let outcome = try await Runner.announce(["quiet", "--json"], environment: ["ANNOUNCE_RUNTIME_DIR": runtime])
        #expect(outcome.status == 0, "\(outcome)")
        Self.check(Self.lines(outcome.stdout).first ?? "", as: "quiet")
    }

    /// An empty 0700 runtime directory of this test's own: no daemon answers there.
    static func freshRuntimeDirectory() throws -> String {
        let path = try Harness.workResult.get().appendingPathComponent("runtime-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return path
    }
}
