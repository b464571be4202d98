import Foundation
import Testing

/// The daemon's audio environment does not depend on who started it (docs/USAGE.md, "From
/// cron"): each play request carries its caller's sound-server variables.
@Suite(
    "Paced device: one daemon for every caller", .serialized, PacedAudioTrait(name: "paced-env"),
    .timeLimit(.minutes(2)))
struct AudioEnvironmentTests {
    @Test(
        "a daemon auto-started from cron's empty environment plays a desktop client's item on that client's sound server"
    )
    func cronStartedDaemon() async throws {
        try await withPacedSession("cron-started") { session in
            let paced = session.paced
            // cron: `env -i` with cron's PATH; its play auto-starts the daemon with no audio variables.
            let cron = try await Runner.run(
                "/usr/bin/env",
                [
                    "-i", "HOME=\(session.directory)", "PATH=/usr/bin:/bin",
                    "ANNOUNCE_RUNTIME_DIR=\(session.runtime.path)",
                    "XDG_CONFIG_HOME=\(Harness.baseConfigHome)", try Harness.binary(), "play", "-d", "null",
                    paced.clips.silence
                ])
            #expect(cron.status == 0, "the cron job's play: \(cron)")
            let daemonEnvironment = try String(
                contentsOfFile: "/proc/\(try #require(Harness.daemonPID(runtime: session.runtime.path)))/environ",
                encoding: .utf8)
            #expect(
                !daemonEnvironment.contains("PULSE_SERVER"), "the daemon was started with the cron job's environment")

            // The desktop: its PULSE_* point at the paced server.
            try session.startRecording()
            let desktop = try await session.announce(["play", "-d", "pulse", paced.clips.b])
            let samples = try await session.stopRecording()
            #expect(desktop.status == 0, "the desktop's play through the cron-started daemon: \(desktop)")
            let heard = PacedAnalysis.segments(samples).filter { $0.tone == PacedClips.bTone }
            #expect(heard.count == 1 && heard[0].length > 0.45, "the 0.5 s 880 Hz tone on the paced sink: \(heard)")
        }
    }
}
