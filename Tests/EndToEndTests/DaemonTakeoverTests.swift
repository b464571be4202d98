import Foundation
import Testing

/// `announce daemon` (a person, or the systemd unit) when a daemon already runs.
@Suite("announce daemon when one already runs", .serialized, .timeLimit(.minutes(2)))
struct DaemonTakeoverTests {
    @Test(
        "it takes over from an auto-started daemon, queue and pause included; a second one says already running and exits 0"
    )
    func takeOver() async throws {
        try await withDaemonRuntime { runtime in
            try await runtime.control("pause")
            let clip = try Tones.clip(440)
            let queued = try await runtime.announce(["play", "--no-wait", "-d", "null", clip])  // auto-starts one
            #expect(queued.status == 0, "\(queued)")
            let auto = try await runtime.status()
            let autoStatus = try await runtime.announce(["status", "--json"])
            let autoObject = try #require(
                try JSONSerialization.jsonObject(with: Data(autoStatus.stdout.utf8)) as? [String: Any])
            #expect(
                autoObject["idleExit"] as? Double == 30, "an auto-started daemon says it exits when idle: \(autoStatus)"
            )
            #expect(autoObject["autoStarted"] as? Bool == true, "\(autoStatus)")

            let permanent = try await runtime.startDaemon(device: "null")
            let status = try await runtime.status()
            #expect(status.pid == permanent.pid && status.pid != auto.pid)
            #expect(
                status.paused && status.queued.map(\.path) == [clip],
                "the queue and the pause went on in the new daemon")

            let second = try await runtime.announce(["daemon", "--device", "null"], killAfter: 10)
            #expect(
                second.status == 0 && second.stderrLines == ["announce: already running (pid \(permanent.pid))"],
                "\(second)")
            #expect(permanent.isRunning)
            try await runtime.control("resume")
        }
    }

    @Test("a daemon a person started with --idle-exit is not taken over: already running, exit 0")
    func aPermanentDaemonWithAnIdleExitIsLeftAlone() async throws {
        try await withDaemonRuntime { runtime in
            let first = try await runtime.startDaemon(device: "null", arguments: ["--idle-exit", "10m"])
            let second = try await runtime.announce(["daemon", "--device", "null"], killAfter: 10)
            #expect(
                second.status == 0 && second.stderrLines == ["announce: already running (pid \(first.pid))"],
                "\(second)")
            #expect(first.isRunning)
        }
    }

    @Test(
        "a client waiting on the auto-started daemon goes on in the one that takes over, never a second auto-started one"
    )
    func aWaitingClientDoesNotWinTheTakeoverRace() async throws {
        try await withDaemonRuntime { runtime in
            try await runtime.control("pause")
            let clip = try Tones.clip(660)
            // auto-starts one
            let first = try await runtime.announce(["play", "--no-wait", "-d", "null", try Tones.clip(440)])
            #expect(first.status == 0, "\(first)")
            let events = try await runtime.subscribe()
            let waiting = Task {
                try await Runner.announce(["play", "-d", "null", clip], environment: runtime.environment, killAfter: 30)
            }
            _ = try await offPool { try events.events { $0.event == "queued" && $0.path == clip } }
            let permanent = try await runtime.startDaemon(device: "null")
            let status = try await runtime.status()
            #expect(status.pid == permanent.pid, "the permanent daemon serves: \(status)")
            try await runtime.control("resume")
            let played = try await waiting.value
            #expect(played.status == 0, "\(played)")
            let object = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(try await runtime.announce(["status", "--json"]).stdout.utf8)) as? [String: Any])
            #expect(object["pid"] as? Int == Int(permanent.pid) && object["autoStarted"] == nil, "\(object)")
        }
    }
}
