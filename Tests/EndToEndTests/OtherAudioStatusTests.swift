import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `status` on an idle daemon asks the sound server whether other audio plays. The look is the
/// watcher thread's: a server that never answers (here a socket that accepts and says nothing)
/// delays the statuses, once for all of them, and holds up no other request.
@Suite("Other audio: status does not hold the control thread", .timeLimit(.minutes(1)))
struct OtherAudioStatusTests {
    @Test("a sound server that never answers: statuses wait for one look, a pause meanwhile does not")
    func aSilentServerHoldsUpNoOtherRequest() async throws {
        let directory = try Harness.workResult.get().appendingPathComponent(
            "silent-server-\(UUID().uuidString.prefix(6))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o700)
        let accepted = directory + "/accepted"
        let server = try startTelling(
            "silent-server",
            [
                "timeout", "60", "python3", "-c",
                """
                import socket, sys
                s = socket.socket(socket.AF_UNIX)
                s.bind(sys.argv[1])
                s.listen(64)
                print("listening", flush=True)
                kept = []
                while True:
                    c, _ = s.accept()
                    kept.append(c)
                    with open(sys.argv[2], "a") as f:
                        f.write("accepted\\n")
                """, directory + "/native", accepted
            ], environment: [:]
        ).process
        defer { server.stop() }
        let runtime = try DaemonRuntime(environment: [
            "PULSE_SERVER": "unix:\(directory)/native", "XDG_RUNTIME_DIR": directory
        ])
        do {
            try await runtime.startDaemon(device: "null", arguments: ["--idle-exit", "60s"])
            let statuses = try (0..<4).map { _ in
                try Runner.launch(["status", "--json"], environment: runtime.environment, killAfter: 20)
            }
            // The first look has begun (the server took its connection): it lasts until libpulse's
            // 500 ms timeout. Before, it did on the control thread, and each status looked again.
            let deadline = monotonicNow() + 20
            while ((try? String(contentsOfFile: accepted, encoding: .utf8)) ?? "").isEmpty && monotonicNow() < deadline
            {
                try await Task.sleep(for: .milliseconds(5))
            }
            let environment = runtime.environment
            let (pause, seconds) = try await offPool {
                let start = monotonicNow()
                let pause = try Runner.launch(["pause"], environment: environment, killAfter: 20)
                _ = pause.child.waitForExit(timeout: 20)
                return (pause, monotonicNow() - start)
            }
            let paused = await pause.outcome()
            #expect(paused.status == 0, "\(paused)")
            #expect(seconds < 1.0, "pause took \(seconds) s while statuses waited for the sound server")
            for status in statuses {
                let outcome = await status.outcome()
                #expect(outcome.status == 0, "\(outcome)")
                let file = directory + "/status-\(UUID().uuidString.prefix(6)).json"
                try outcome.stdout.write(toFile: file, atomically: true, encoding: .utf8)
                let read = try await Runner.run(
                    "python3",
                    [
                        "-c",
                        "import json, sys; s = json.load(open(sys.argv[1])); print(s.get('otherAudioPlaying'), s['paused'])",
                        file
                    ])
                #expect(read.stdout == "None False\n" || read.stdout == "None True\n", "status: \(read)")
            }
            print("status with a silent sound server: pause answered in \(String(format: "%.0f", seconds * 1000)) ms")
        } catch {
            await runtime.cleanup()
            throw error
        }
        await runtime.cleanup()
    }
}
