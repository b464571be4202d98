import Foundation
import Testing

/// Devices are checked when an item is accepted, and `file:` names are the caller's; the pause
/// is a file that outlives the daemon (docs/USAGE.md, "Other commands").
@Suite("Devices checked at once; the pause without a daemon", .serialized, .timeLimit(.minutes(2)))
struct DeviceCheckTests {
    @Test("a misspelt device fails at once, 69, one line naming it: nothing is queued, the queued item stays")
    func misspeltDevice() async throws {
        try await withDaemonRuntime { runtime in
            let clip = try Tones.clip(440)
            try await runtime.startDaemon(device: "null")
            try await runtime.control("pause")
            let queued = try await runtime.announce(["play", "--no-wait", "-d", "null", clip])
            #expect(queued.status == 0, "\(queued)")
            for name in ["defualt", "hw:9", "nosuchpcm:CARD=x"] {
                let typo = try await runtime.announce(
                    ["play", "--priority", "critical", "-d", name, clip], killAfter: 10)
                #expect(typo.status == 69, "\(name): \(typo)")
                #expect(
                    typo.stderrLines.count == 1 && typo.stderrLines[0].hasPrefix("announce: device '\(name)': "),
                    "\(typo.stderrLines)")
            }
            let status = try await runtime.status()
            #expect(status.queued.map(\.path) == [clip] && status.playing == nil, "only the first item, untouched")
        }
    }

    @Test(
        "a file: device that cannot be written fails at once, 69, one line naming it and why: nothing queued or preempted, no file made"
    )
    func unwritableFile() async throws {
        try await withDaemonRuntime { runtime in
            let clip = try Tones.clip(440, seconds: 0.5)
            let directory = try Harness.workResult.get().appendingPathComponent(
                "captures/unwritable-\(UUID().uuidString.prefix(8))"
            ).path
            try FileManager.default.createDirectory(
                atPath: directory + "/a-directory.wav", withIntermediateDirectories: true)
            try await runtime.startDaemon(device: "null")
            try await runtime.control("pause")
            let queued = try await runtime.announce(["play", "--no-wait", "-d", "null", clip])
            #expect(queued.status == 0, "\(queued)")
            let cases: [(arguments: [String], device: String, reason: String)] = [
                (
                    ["-d", "file:FILE=\(directory)/missing/x.wav,FORMAT=wav"],
                    "file:FILE=\(directory)/missing/x.wav,FORMAT=wav",
                    "cannot write \(directory)/missing/x.wav: \(directory)/missing: No such file or directory"
                ),
                (
                    ["-d", "file:FILE=\(directory)/sub/../x.raw"], "file:FILE=\(directory)/sub/../x.raw",
                    "cannot write \(directory)/sub/../x.raw: \(directory)/sub/..: No such file or directory"
                ),
                (
                    ["-d", "file:FILE=\(directory)/a-directory.wav,FORMAT=wav"],
                    "file:FILE=\(directory)/a-directory.wav,FORMAT=wav",
                    "\(directory)/a-directory.wav is a directory"
                ),
                (
                    ["--category", "multi-route", "-d", "null", "-d", "file:FILE=\(directory)/missing/y.wav"],
                    "file:FILE=\(directory)/missing/y.wav",
                    "cannot write \(directory)/missing/y.wav: \(directory)/missing: No such file or directory"
                )
            ]
            for (arguments, device, reason) in cases {
                let refused = try await runtime.announce(
                    ["play", "--priority", "critical"] + arguments + [clip], killAfter: 10)
                #expect(
                    refused.status == 69 && refused.stderrLines == ["announce: device '\(device)': \(reason)"],
                    "\(arguments): \(refused)")
            }
            let alert = try await runtime.announce(
                ["alert", "-d", "file:FILE=\(directory)/missing/z.wav,FORMAT=wav", clip], killAfter: 10)
            #expect(
                alert.status == 69 && alert.stderrLines.count == 1
                    && alert.stderrLines[0].hasSuffix("z.wav: \(directory)/missing: No such file or directory"),
                "\(alert)")
            let status = try await runtime.status()
            #expect(status.queued.map(\.path) == [clip] && status.playing == nil, "only the first item, untouched")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["a-directory.wav"])
        }
    }

    @Test(
        "a file: device whose writes fail mid-play (/dev/full) fails the item with 69 and one line, not waited for as lost"
    )
    func fileFailingMidPlay() async throws {
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: "null")
            let played = try await runtime.announce(
                ["play", "-d", "file:FILE=/dev/full,FORMAT=raw", try Tones.clip(440)], killAfter: 20)
            #expect(
                played.status == 69 && played.stderrLines.count == 1
                    && played.stderrLines[0].hasPrefix("announce: device 'file:FILE=/dev/full,FORMAT=raw': "),
                "\(played)")
            let status = try await runtime.status()
            #expect(status.queued.isEmpty && status.playing == nil, "nothing left waiting for the file")
        }
    }

    @Test("-d jack with no JACK server: 69 with JACK's own reason, and none of its library's lines in daemon.log")
    func jackWithoutServer() async throws {
        try await withDaemonRuntime { runtime in
            let clip = try Tones.clip(440, seconds: 0.2)
            // Auto-started: its stderr is daemon.log.
            let refused = try await runtime.announce(["play", "-d", "jack", clip], killAfter: 20)
            #expect(
                refused.status == 69
                    && refused.stderrLines == [
                        "announce: device 'jack': jack server is not running or cannot be started"
                    ],
                "\(refused)")
            let played = try await runtime.announce(["play", "-d", "null", clip])
            #expect(played.status == 0, "\(played)")
            let log = runtime.daemonLogLines()
            #expect(log.contains { $0.hasSuffix(": played") }, "the daemon's own lines are still there: \(log)")
            #expect(log.allSatisfy { $0.wholeMatch(of: /\d{4}-\d\d-\d\dT[\d:.]+Z \[\d+\] \w+: .*/) != nil }, "\(log)")
        }
    }

    @Test("-d file:FILE=rel.wav lands in the caller's directory; file: without FILE says so (64)")
    func relativeFile() async throws {
        try await withDaemonRuntime { runtime in
            let clip = try Tones.clip(440, seconds: 0.5)
            let directory = try Harness.workResult.get().appendingPathComponent(
                "captures/cwd-\(UUID().uuidString.prefix(8))"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let announce = try Harness.binary()
            for (name, device) in [
                ("named.wav", "file:FILE=named.wav,FORMAT=wav"), ("positional.wav", "file:positional.wav,wav")
            ] {
                let result = try await Runner.run(
                    "/bin/sh", ["-c", "cd \(directory) && exec \(announce) play -d '\(device)' \(clip)"],
                    environment: runtime.environment)
                #expect(result.status == 0, "\(device): \(result)")
                // Read back by sox, not by us.
                let soxi = try await Runner.run("/usr/bin/soxi", ["-s", directory + "/" + name])
                #expect(soxi.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "24000", "\(device): \(soxi)")
            }
            let missing = try await runtime.announce(["play", "-d", "file:", clip])
            #expect(
                missing.status == 64
                    && missing.stderrLines == [
                        "announce: file:: ALSA's file device needs FILE, e.g. file:FILE=out.wav,FORMAT=wav"
                    ], "\(missing)")
        }
    }

    @Test("devices marks the outputs that cannot open here, and JACK's and OSS's probing says nothing on stderr")
    func devicesMarked() async throws {
        let result = try await Runner.announce(["devices", "--json"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let listed = try #require(object["devices"] as? [[String: Any]])
        let problems = Dictionary(listed.map { ($0["name"] as? String ?? "", $0["problem"] as? String) }) { $1 }
        #expect(problems["null"] == .some(nil), "null always opens: \(problems)")
        // libasound2-plugins (a test package) defines jack; no JACK server runs here.
        #expect(problems["jack"].map { $0 != nil } ?? true, "\(problems)")
    }

    @Test("pause with no daemon running pauses the next one; status says so with and without it; resume lifts it")
    func pauseWithoutDaemon() async throws {
        try await withDaemonRuntime { runtime in
            try await runtime.control("pause")
            let text = try await runtime.announce(["status"])
            #expect(text.stdout.hasPrefix("no daemon running; the queue is paused (since "), "\(text)")
            let json = try await runtime.announce(["status", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(
                object["running"] as? Bool == false && object["paused"] as? Bool == true
                    && object["pausedSince"] is Double, "\(json)")
            // A daemon started now is paused: the item waits, and the reply says since when.
            let queued = try await runtime.announce(["play", "--no-wait", "--json", "-d", "null", try Tones.clip(440)])
            let reply = try #require(try JSONSerialization.jsonObject(with: Data(queued.stdout.utf8)) as? [String: Any])
            #expect(reply["pausedSince"] as? Double == object["pausedSince"] as? Double, "\(queued)")
            let running = try await runtime.announce(["status"])
            #expect(running.stdout.contains(", paused (since "), "\(running)")
            #expect(try await runtime.status().queued.count == 1)
            try await runtime.control("resume")
            let after = try await runtime.announce(["status", "--json"])
            let resumed = try #require(
                try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])
            #expect(resumed["paused"] as? Bool == false && resumed["pausedSince"] == nil, "\(after)")
        }
    }

    @Test(
        "play into a paused queue says so: --json prints a waiting event (paused) per item before the outcomes; -q without a terminal still warns"
    )
    func playIntoPausedQueue() async throws {
        try await withDaemonRuntime { runtime in
            let clip = try Tones.clip(440, seconds: 0.2)
            try await runtime.startDaemon(device: "null")
            try await runtime.control("pause")
            let warning = /announce: warning: the queue is paused \(since .+\): waiting for `announce resume`/
            for (arguments, items) in [(["--json"], 2), (["-q"], 1)] {
                let events = try await runtime.subscribe()
                let play = Task {
                    try await runtime.announce(
                        ["play"] + arguments + ["-d", "null"] + Array(repeating: clip, count: items), killAfter: 20)
                }
                _ = try await offPool {
                    var queued = 0
                    return try events.events { event in
                        queued += event.event == "queued" ? 1 : 0
                        return queued == items
                    }.count
                }
                try await runtime.control("resume")
                let result = try await play.value
                #expect(result.status == 0, "\(arguments): \(result)")
                #expect(
                    result.stderrLines.count == 1 && result.stderrLines[0].wholeMatch(of: warning) != nil,
                    "\(arguments): \(result)")
                if arguments == ["--json"] {
                    let lines = JSONOutputTests.lines(result.stdout).map { JSONOutputTests.check($0, as: "events") }
                    #expect(
                        lines.map { $0["event"] as? String } == ["waiting", "waiting", "finished", "finished"],
                        "\(result.stdout)")
                    #expect(
                        lines.prefix(2).allSatisfy {
                            $0["reason"] as? String == "paused" && $0["path"] as? String == clip
                        }, "\(result.stdout)")
                    #expect(
                        lines.prefix(2).map { $0["id"] as? String } == lines.suffix(2).map { $0["id"] as? String },
                        "\(result.stdout)")
                } else {
                    #expect(result.stdout.isEmpty, "\(result)")
                }
                try await runtime.control("pause")
            }
        }
    }
}
