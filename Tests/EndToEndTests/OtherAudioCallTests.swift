import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Other applications' audio as announce's session sees it (issue 15, DESIGN §3): a call (a
/// stream of media.role phone) interrupts announce and it resumes when the call ends, `status`
/// says whether other audio plays, and `--if-other-audio` skips, waits or ducks; on a real
/// PulseAudio and a real PipeWire (pipewire-pulse). What sounds is measured on the sink's
/// monitor, the status JSON is read by python's json, volumes by pactl.
@Suite(
    "Calls and other audio: PulseAudio", .serialized, OtherAudioServerTrait(kind: .pulseAudio, name: "call-pa"),
    .timeLimit(.minutes(2)))
struct OtherAudioCallPulseAudioTests {
    @Test("a phone stream pauses announce's item; when it ends the item resumes, every frame heard once")
    func callInterruptsAndResumes() async throws { try await OtherAudioCallChecks.callInterruptsAndResumes() }

    @Test("a call pauses a mixing (ambient) item too, and a queued item starts only once the call ends")
    func callInterruptsBothLanes() async throws { try await OtherAudioCallChecks.callInterruptsBothLanes() }

    @Test("a call whose player pauses (its stream corked, still there) ends the interruption")
    func corkedCallEnds() async throws { try await OtherAudioCallChecks.corkedCallEnds() }

    @Test("status says whether other audio plays; --if-other-audio skip exits 75, wait starts once it stops")
    func otherAudioPlaying() async throws { try await OtherAudioCallChecks.otherAudioPlaying() }

    @Test("--if-other-audio duck lowers the other application 12 dB while the item plays, then restores it")
    func duckIfOtherAudio() async throws {
        try await OtherAudioDuckChecks.duckAndRestore(options: ["--if-other-audio", "duck"], label: "if-duck")
    }
}

@Suite(
    "Calls and other audio: PipeWire", .serialized, OtherAudioServerTrait(kind: .pipeWire, name: "call-pw"),
    .timeLimit(.minutes(2)))
struct OtherAudioCallPipeWireTests {
    @Test("a phone stream pauses announce's item; when it ends the item resumes, every frame heard once")
    func callInterruptsAndResumes() async throws { try await OtherAudioCallChecks.callInterruptsAndResumes() }

    @Test("a call pauses a mixing (ambient) item too, and a queued item starts only once the call ends")
    func callInterruptsBothLanes() async throws { try await OtherAudioCallChecks.callInterruptsBothLanes() }

    @Test("a call whose player pauses (its stream corked, still there) ends the interruption")
    func corkedCallEnds() async throws { try await OtherAudioCallChecks.corkedCallEnds() }

    @Test("status says whether other audio plays; --if-other-audio skip exits 75, wait starts once it stops")
    func otherAudioPlaying() async throws { try await OtherAudioCallChecks.otherAudioPlaying() }

    @Test("--if-other-audio duck lowers the other application 12 dB while the item plays, then restores it")
    func duckIfOtherAudio() async throws {
        try await OtherAudioDuckChecks.duckAndRestore(options: ["--if-other-audio", "duck"], label: "if-duck")
    }
}

/// No sound server (plain ALSA): nothing interrupts, status leaves other audio out, and
/// `--if-other-audio` plays.
@Suite("Calls and other audio: no sound server", .timeLimit(.minutes(1)))
struct OtherAudioCallPlainALSATests {
    @Test("status has no otherAudioPlaying; --if-other-audio skip and wait play")
    func nothingPlaysThere() async throws {
        let nowhere = try Harness.workResult.get().appendingPathComponent("no-server-calls").path
        try? FileManager.default.createDirectory(atPath: nowhere, withIntermediateDirectories: true)
        chmod(nowhere, 0o700)
        let runtime = try DaemonRuntime(environment: [
            "PULSE_SERVER": "unix:\(nowhere)/native", "XDG_RUNTIME_DIR": nowhere
        ])
        do {
            try await runtime.startDaemon(device: "null", arguments: ["--idle-exit", "60s"])
            let clip = try Tones.clip(440, seconds: 0.2)
            let status = try await runtime.status()
            #expect(
                status.otherAudioPlaying == nil && status.call == nil,
                "status: \(String(describing: status.otherAudioPlaying))")
            for choice in ["skip", "wait", "duck"] {
                let played = try await runtime.announce(["play", clip, "--if-other-audio", choice])
                #expect(played.status == 0, "--if-other-audio \(choice) with no sound server: \(played)")
            }
        } catch {
            await runtime.cleanup()
            throw error
        }
        await runtime.cleanup()
    }
}

enum OtherAudioCallChecks {
    static let rate = 48000.0
    static let window = 1200
    static let hop = 48
    static let bytesPerSecond = 48000 * 4
    static let clipSeconds = 3.0

    /// A fresh directory and runtime on the suite's server, cleaned up after `body`.
    static func withRuntime(_ label: String, _ body: (OtherAudioServer, String, DaemonRuntime) async throws -> Void)
        async throws
    {
        guard let server = OtherAudioServerTrait.current else { throw HarnessError("no sound server for \(label)") }
        try await HeavyLoad.exclusively {
            let directory = server.directory + "/" + label
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let runtime = try DaemonRuntime(path: directory + "/rt", environment: server.processEnvironment)
            do {
                try await body(server, directory, runtime)
            } catch {
                await runtime.cleanup()
                throw error
            }
            await runtime.cleanup()
        }
    }

    // MARK: a call

    static func callInterruptsAndResumes() async throws {
        try await withRuntime("call") { server, directory, runtime in
            let recording = directory + "/monitor.s16"
            let recorder = try server.start(
                [
                    "timeout", "60", "parec", "--raw", "--format=s16le", "--rate=48000", "--channels=2",
                    "--latency-msec=10", "-d", server.sink + ".monitor"
                ], stdout: recording)
            defer { recorder.stop() }
            try await runtime.startDaemon(device: "pulse", arguments: ["--idle-exit", "60s"])
            let clip = directory + "/announce-1000.wav"
            let phone = directory + "/phone-440.wav"
            try Sox.tone(clip, frequency: 1000, seconds: clipSeconds, rate: Int(rate), channels: 2)
            // 3 s: the status taken once the call began still finds it going under a loaded run's
            // slow client start (a 1 s call had ended by then once in CI).
            try Sox.tone(phone, frequency: 440, seconds: 3, rate: Int(rate), channels: 2)
            try await OtherAudioDuckChecks.waitForBytes(recording, atLeast: bytesPerSecond / 2)
            let client = try await runtime.subscribe()
            let play = try Runner.launch(["play", clip], environment: runtime.environment, killAfter: 40)
            _ = try await offPool { try client.events(until: { $0.event == "started" }, timeout: 20) }
            try await Task.sleep(for: .milliseconds(700))
            let callStart = Date().timeIntervalSince1970
            let caller = try server.start(
                [
                    "timeout", "30", "paplay", "--client-name=call-test", "--property=media.role=phone",
                    "--latency-msec=20", phone
                ], stdout: directory + "/phone.out")
            defer { caller.stop() }
            let untilBegan = try await offPool {
                try client.events(until: { $0.event == "interruption-began" }, timeout: 10)
            }
            let began = try #require(untilBegan.last)
            // While the call lasts the queue holds, and status says why.
            let during = try await runtime.status()
            let rest = try await offPool { try client.events(until: { $0.event == "finished" }, timeout: 30) }
            let outcome = await play.outcome()
            #expect(outcome.status == 0, "announce play: \(outcome)")
            #expect(
                began.reason == "call" && (began.warning ?? "").contains("call-test")
                    && (began.warning ?? "").contains("role phone"),
                "interruption-began: \(began) warning \(began.warning ?? "-")")
            #expect(
                during.holds == ["call"] && (during.call ?? "").contains("call-test") && during.playing == nil,
                "status during the call: holds \(String(describing: during.holds)), call \(during.call ?? "-")")
            let ended = rest.first { $0.event == "interruption-ended" }
            #expect(ended?.shouldResume == true, "interruption-ended: \(String(describing: ended)); events \(rest)")
            let resumed = rest.last { $0.event == "started" }
            #expect(rest.last?.outcome?.kind == "played", "finished: \(String(describing: rest.last))")
            let reaction = began.time - callStart
            PacedAudio.report(
                "call on \(server.kind.rawValue): paplay (media.role=phone) started → interruption-began "
                    + "\(String(format: "%.0f", reaction * 1000)) ms (heard \(began.heard ?? -1) s); interruption-ended → started again "
                    + "\(String(format: "%.0f", ((resumed?.time ?? 0) - (ended?.time ?? 0)) * 1000)) ms, resumed at \(resumed?.heard ?? -1) s"
            )
            #expect(reaction < 2, "announce paused \(reaction) s after the phone stream started")
            // What the sink heard: announce's tone in two parts around the call, all of it once.
            let size = (try FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0
            try await OtherAudioDuckChecks.waitForBytes(recording, atLeast: size + bytesPerSecond / 3)
            recorder.stop()
            try analyseCall(try PacedAudio.monoSamples(ofRecording: recording), server: server.kind)
        }
    }

    /// announce's 1000 Hz sounds twice, around the 440 Hz call and not over it; together its
    /// parts last the clip's length (each start that opens the device loses its first 7–9 ms, the
    /// resume fades in over 50 ms): nothing heard twice, nothing skipped.
    static func analyseCall(_ samples: [Double], server: OtherAudioServer.Kind) throws {
        // An underrun on a loaded machine splits a span; spans closer than `joined` are one. The
        // call is paplay's, whose underruns are not what is checked: it is joined more widely.
        func spans(_ frequency: Double, joined gap: Double) -> [ClosedRange<Double>] {
            let envelope = ToneAnalysis.envelope(samples, frequency: frequency, rate: rate, window: window, hop: hop)
            return ToneAnalysis.spans(
                envelope, level: ToneAnalysis.plateau(envelope), rate: rate, window: window, hop: hop
            )
            .reduce(into: [ClosedRange<Double>]()) { joined, span in
                if let last = joined.last, span.lowerBound - last.upperBound < gap {
                    joined[joined.count - 1] = last.lowerBound...span.upperBound
                } else {
                    joined.append(span)
                }
            }
        }
        let voice = spans(1000, joined: 0.06)
        let call = spans(440, joined: 0.5)
        let text = { (spans: [ClosedRange<Double>]) in
            spans.map { String(format: "%.3f–%.3f", $0.lowerBound, $0.upperBound) }
        }
        try #require(
            voice.count == 2 && call.count == 1,
            "announce's tone should sound twice around one call: \(text(voice)), call \(text(call))")
        let heard = voice.map { $0.upperBound - $0.lowerBound }.reduce(0, +)
        let silentAfter = voice[0].upperBound - call[0].lowerBound
        let backAfter = voice[1].lowerBound - call[0].upperBound
        PacedAudio.report(
            "call on \(server.rawValue), as heard: announce \(text(voice)), call \(text(call)); announce silent "
                + "\(String(format: "%.0f", silentAfter * 1000)) ms after the call sounded, back \(String(format: "%.0f", backAfter * 1000)) ms "
                + "after it ended; \(String(format: "%.3f", heard)) s of the \(clipSeconds) s clip heard")
        #expect(abs(heard - clipSeconds) <= 0.06, "announce's parts last \(heard) s, not the clip's \(clipSeconds) s")
        #expect(silentAfter <= 0.5, "announce still sounded \(silentAfter) s into the call")
        #expect(backAfter >= -0.02 && backAfter <= 1.5, "announce came back \(backAfter) s after the call ended")
    }

    static func callInterruptsBothLanes() async throws {
        try await withRuntime("lanes") { server, directory, runtime in
            try await runtime.startDaemon(device: "pulse", arguments: ["--idle-exit", "60s"])
            let bed = directory + "/bed-660.wav"
            let voice = directory + "/voice-1000.wav"
            let phone = directory + "/phone-440.wav"
            try Sox.tone(bed, frequency: 660, seconds: 2, rate: Int(rate), channels: 2)
            try Sox.tone(voice, frequency: 1000, seconds: 0.3, rate: Int(rate), channels: 2)
            try Sox.tone(phone, frequency: 440, seconds: 0.8, rate: Int(rate), channels: 2)
            let client = try await runtime.subscribe()
            let ambient = try Runner.launch(
                ["play", bed, "--category", "ambient"], environment: runtime.environment, killAfter: 30)
            _ = try await offPool { try client.events(until: { $0.event == "started" }, timeout: 20) }
            let caller = try server.start(
                [
                    "timeout", "30", "paplay", "--client-name=call-lanes", "--property=media.role=communication",
                    "--latency-msec=20", phone
                ], stdout: directory + "/phone.out")
            defer { caller.stop() }
            let began = try await offPool {
                try client.events(until: { $0.event == "interruption-began" }, timeout: 10)
            }.last
            // Queued during the call: it waits for the call's end.
            let queued = try await runtime.announce(["play", voice, "--no-wait", "--priority", "critical"])
            #expect(queued.status == 0, "play --no-wait during the call: \(queued)")
            let voiceID = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let rest = try await offPool {
                var finished = 0
                return try client.events(
                    until: { event in
                        if event.event == "finished" { finished += 1 }
                        return finished == 2
                    }, timeout: 30)
            }
            let outcome = await ambient.outcome()
            #expect(outcome.status == 0, "the ambient item: \(outcome)")
            #expect(
                began?.reason == "call" && began?.path == bed && (began?.warning ?? "").contains("role communication"),
                "interruption-began: \(String(describing: began))")
            let ended = rest.first { $0.event == "interruption-ended" && $0.path == bed }
            #expect(ended?.shouldResume == true, "the ambient item's interruption-ended: \(rest)")
            let voiceStarted = rest.first { $0.event == "started" && $0.path == voice }
            #expect(
                voiceStarted != nil && voiceStarted!.time >= ended?.time ?? .infinity,
                "the item queued during the call started at \(String(describing: voiceStarted?.time)), the call ended at \(String(describing: ended?.time))"
            )
            #expect(
                rest.filter { $0.event == "finished" }.allSatisfy { $0.outcome?.kind == "played" }, "outcomes: \(rest)")
            #expect(!voiceID.isEmpty)
        }
    }

    /// mpv playing with media.role=phone is the call; paused over its IPC socket, its stream corks.
    static func corkedCallEnds() async throws {
        try await withRuntime("cork") { server, directory, runtime in
            try await runtime.startDaemon(device: "pulse", arguments: ["--idle-exit", "60s"])
            let clip = directory + "/announce-1000.wav"
            let phone = directory + "/phone-440.wav"
            let socket = directory + "/mpv.sock"
            try Sox.tone(clip, frequency: 1000, seconds: 2, rate: Int(rate), channels: 2)
            try Sox.tone(phone, frequency: 440, seconds: 2, rate: Int(rate), channels: 2)
            let client = try await runtime.subscribe()
            let play = try Runner.launch(["play", clip], environment: runtime.environment, killAfter: 40)
            _ = try await offPool { try client.events(until: { $0.event == "started" }, timeout: 20) }
            let mpv = try server.start(
                [
                    "timeout", "60", "env", "PULSE_PROP=media.role=phone", "mpv", "--no-config", "--no-video",
                    "--ao=pulse", "--loop-file=inf", "--input-ipc-server=" + socket, "--audio-client-name=call-mpv",
                    phone
                ], stdout: directory + "/mpv.out")
            defer { mpv.stop() }
            let began = try await offPool {
                try client.events(until: { $0.event == "interruption-began" }, timeout: 20)
            }.last
            #expect(
                began?.reason == "call" && (began?.warning ?? "").contains("call-mpv"),
                "interruption-began: \(String(describing: began))")
            let pauseAsked = Date().timeIntervalSince1970
            let paused = try await Runner.run(
                "python3",
                [
                    "-c",
                    """
                    import socket, sys
                    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                    s.sendall(b'{"command":["set_property","pause",true]}\\n'); print(s.recv(200).decode())
                    """, socket
                ])
            #expect(paused.status == 0 && paused.stdout.contains("success"), "mpv's pause: \(paused)")
            let rest = try await offPool { try client.events(until: { $0.event == "finished" }, timeout: 20) }
            let outcome = await play.outcome()
            #expect(outcome.status == 0, "announce play: \(outcome)")
            let ended = rest.first { $0.event == "interruption-ended" }
            #expect(ended?.shouldResume == true, "interruption-ended: \(rest)")
            #expect(rest.last?.outcome?.kind == "played", "finished: \(String(describing: rest.last))")
            let still = try await server.streams().contains { $0.application == "call-mpv" }
            #expect(still, "mpv's stream went away: the interruption ended by its end, not by its cork")
            PacedAudio.report(
                "call on \(server.kind.rawValue): mpv asked to pause (its stream corks) → interruption-ended "
                    + "\(String(format: "%.0f", ((ended?.time ?? 0) - pauseAsked) * 1000)) ms (python3's start included)"
            )
        }
    }

    // MARK: other audio playing

    /// `status --json`'s otherAudioPlaying as python's json reads it ("True", "False", "None").
    static func otherAudioPlaying(_ runtime: DaemonRuntime, _ directory: String) async throws -> String {
        let status = try await runtime.announce(["status", "--json"])
        guard status.status == 0 else { throw HarnessError("announce status --json: \(status)") }
        let file = directory + "/status.json"
        try status.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let read = try await Runner.run(
            "python3", ["-c", "import json, sys; print(json.load(open(sys.argv[1])).get('otherAudioPlaying'))", file])
        guard read.status == 0 else { throw HarnessError("python3 could not read the status: \(read)") }
        return read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls until status says `expected`; the seconds it took, nil at `timeout`.
    static func waitForOtherAudio(_ expected: String, _ runtime: DaemonRuntime, _ directory: String, timeout: Double)
        async throws -> Double?
    {
        let start = monotonicNow()
        while monotonicNow() - start < timeout {
            if try await otherAudioPlaying(runtime, directory) == expected { return monotonicNow() - start }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    static func otherAudioPlaying() async throws {
        try await withRuntime("other") { server, directory, runtime in
            try await runtime.startDaemon(device: "pulse", arguments: ["--idle-exit", "60s"])
            let clip = directory + "/announce-1000.wav"
            try Sox.tone(clip, frequency: 1000, seconds: 0.3, rate: Int(rate), channels: 2)
            #expect(try await otherAudioPlaying(runtime, directory) == "False", "nothing else plays yet")
            let other = try server.startTone(client: "other-status", frequency: 440, output: directory + "/other.out")
            defer { other.stop() }
            let seen = try await waitForOtherAudio("True", runtime, directory, timeout: 15)
            #expect(seen != nil, "status never said other audio plays while another application played")
            let status = try await runtime.status()
            #expect(
                (status.otherAudioStreams ?? []).contains { $0.hasPrefix("other-status") },
                "streams: \(String(describing: status.otherAudioStreams))")
            let text = try await runtime.announce(["status"])
            #expect(text.stdout.contains("other audio playing: other-status"), "status: \(text.stdout)")

            // skip: silenced, 75, with the reason.
            let skipped = try await runtime.announce(["play", clip, "--if-other-audio", "skip"])
            #expect(
                skipped.status == 75 && skipped.stderr.contains("silenced (other audio playing)"),
                "--if-other-audio skip: \(skipped)")
            // wait: held (status says why) until the other stream stops, then it plays.
            let client = try await runtime.subscribe()
            let waiting = try Runner.launch(
                ["play", clip, "--if-other-audio", "wait", "--expire", "20s"],
                environment: runtime.environment, killAfter: 30)
            var held: WireStatus?
            for _ in 0..<200 where held == nil {
                let now = try await runtime.status()
                if now.holds == ["other audio playing"] {
                    held = now
                } else {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(
                held != nil && held?.queued.count == 1 && held?.playing == nil,
                "status while it waits: \(String(describing: held?.holds))")
            try await Task.sleep(for: .milliseconds(300))
            #expect(waiting.child.isRunning, "--if-other-audio wait played while the other stream played")
            let stopped = Date().timeIntervalSince1970
            other.stop()
            let events = try await offPool { try client.events(until: { $0.event == "finished" }, timeout: 20) }
            let outcome = await waiting.outcome()
            #expect(outcome.status == 0, "--if-other-audio wait: \(outcome)")
            let started = try #require(events.first { $0.event == "started" }, "no started: \(events)")
            PacedAudio.report(
                "other audio on \(server.kind.rawValue): status said playing \(String(format: "%.0f", (seen ?? -1) * 1000)) ms "
                    + "after the other player started; --if-other-audio wait started \(String(format: "%.0f", (started.time - stopped) * 1000)) ms after it was stopped"
            )
            #expect(
                started.time >= stopped && started.time - stopped < 3,
                "started \(started.time - stopped) s after the other stream was stopped")
            #expect(
                try await waitForOtherAudio("False", runtime, directory, timeout: 5) != nil,
                "status still says other audio plays")
        }
    }
}
