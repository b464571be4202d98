import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `announce say` through the daemon on ALSA's file device, checked against espeak-ng's own
/// render read back by sox: what is heard, exit codes, the spool, the render cache, a crashing
/// engine. Each test has its own runtime and cache directory.
@Suite("announce say: speech through the queue", .serialized, .timeLimit(.minutes(3)))
struct SpeechTests {
    static let text = "Backup finished on nas. The next one runs tonight at ten! Is that all?"

    /// A scratch directory for one test: its cache home and its fake engines.
    private func scratch(_ label: String) throws -> String {
        let path = try Harness.capturePath(label) + ".d"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A directory with an `espeak-ng` that logs each render to `runs` (once it has its text: an
    /// engine started ahead waits for one) and then does `body` with the text on its stdin (a
    /// shell snippet; `$REAL` is the real engine), for the daemon's PATH.
    private func fakeEngine(in directory: String, _ body: String) throws -> (path: String, runs: String) {
        let bin = directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let runs = directory + "/runs"
        let script =
            "#!/bin/sh\ntext=$(cat)\necho run >> '\(runs)'\nREAL=/usr/bin/espeak-ng\nprintf '%s' \"$text\" | {\n\(body)\n}\n"
        FileManager.default.createFile(atPath: bin + "/espeak-ng", contents: Data(script.utf8))
        chmod(bin + "/espeak-ng", 0o755)
        return (bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"), runs)
    }

    private func runs(_ path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    @Test("say plays the engine's render: the first 300 ms match it (no clipped syllable), all of it is heard")
    func firstSyllable() async throws {
        try await withDaemonRuntime { runtime in
            let capture = try Harness.capturePath("say")
            let home = try scratch("say-cache")
            let result = try await runtime.announce(
                ["say", "-d", Harness.fileDevice(capture), Self.text],
                environment: ["XDG_CACHE_HOME": home])
            try #require(result.status == 0, "\(result)")
            let heard = try await SpeechAudio.samples(capture)
            let reference = try await SpeechAudio.samples(try await SpeechAudio.espeakRender(Self.text))
            let window = 6615  // 300 ms at espeak-ng's 22050 Hz
            try #require(heard.count > window && reference.count > window)
            let correlation = SpeechAudio.correlation(heard[..<window], reference[..<window])
            #expect(correlation >= 0.99, "first 300 ms: correlation \(correlation) with espeak-ng's own render")
            // Rendered a sentence at a time, the whole is within a few pauses of one render.
            let ratio = Double(heard.count) / Double(reference.count)
            #expect(abs(ratio - 1) < 0.1, "heard \(heard.count) frames, espeak-ng renders \(reference.count)")
        }
    }

    @Test("bad text and a missing engine: each one line with its exit code, and the daemon keeps its queue")
    func badInput() async throws {
        try await withDaemonRuntime { runtime in
            let device = Harness.fileDevice(try Harness.capturePath("say-bad"))
            func say(_ arguments: [String], _ environment: [String: String?] = [:]) async throws -> Outcome {
                try await runtime.announce(["say", "-d", device] + arguments, environment: environment)
            }
            let empty = try await say(["  "])
            #expect(empty.status == 64 && empty.stderr.contains("empty"), "\(empty)")
            let invalid = try await Runner.run(
                "sh", ["-c", "exec \"$0\" say -d \"$1\" \"$(printf 'caf\\303 ok')\"", try Harness.binary(), device],
                environment: runtime.environment)
            #expect(invalid.status == 65 && invalid.stderr.contains("not UTF-8 at byte offset 3"), "\(invalid)")
            let stdin = try await Runner.run(
                "sh", ["-c", "printf 'ab\\377' | exec \"$0\" say -d \"$1\" -", try Harness.binary(), device],
                environment: runtime.environment)
            #expect(stdin.status == 65 && stdin.stderr.contains("stdin: not UTF-8 at byte offset 2"), "\(stdin)")
            let missing = try await say(["hello"], ["PATH": "/nonexistent"])
            #expect(
                missing.status == 69 && missing.stderr.contains("install the Debian package espeak-ng"), "\(missing)")
            let dash = try await say(["--", "-5 degrees tonight."])
            #expect(dash.status == 0, "text starting with - after --: \(dash)")
            let speed = try await say(["--speed", "10", "hi"])
            #expect(speed.status == 64 && speed.stderr.contains("--speed 10"), "\(speed)")
            let ssml = try await say(["--engine", "flite", "--ssml", "<speak>hi</speak>"])
            #expect(ssml.status == 64 && ssml.stderr.contains("flite does not read SSML"), "\(ssml)")
            // espeak-ng would read an <audio src> file with the daemon's rights.
            let audio = try await say(["--ssml", #"<speak>a<audio src="/etc/hostname"/>b</speak>"#])
            #expect(
                audio.status == 64
                    && audio.stderrLines == [
                        "announce: the text: SSML <audio> is not spoken; play the file with announce play"
                    ],
                "\(audio)")
            let nul = try await Runner.run(
                "sh", ["-c", "printf 'ab\\000cd' | exec \"$0\" say -d \"$1\" -", try Harness.binary(), device],
                environment: runtime.environment)
            #expect(nul.status == 65 && nul.stderr.contains("stdin: a NUL byte at byte offset 2"), "\(nul)")
            let voice = try await say(["--voice", "zz", "hi"])
            #expect(voice.status == 69 && voice.stderr.contains("espeak-ng has no voice 'zz'"), "\(voice)")
            let variant = try await say(["--voice", "en-us+f3", "hi"])
            #expect(variant.status == 0, "a voice with a variant: \(variant)")
            let late = try await say(["--start", "30s", "A short sentence."])
            #expect(late.status == 64 && late.stderr.contains("--start 0:30.0 is at or past the end"), "\(late)")
            let url = try await say(["--engine", "flite", "--voice", "http://example.org/x.flitevox", "hi"])
            #expect(url.status == 64 && url.stderr.contains("not URLs"), "\(url)")
            let noFile = try await say(["--engine", "flite", "--voice", "/nonexistent/x.flitevox", "hi"])
            #expect(noFile.status == 66 && noFile.stderr.contains("/nonexistent/x.flitevox"), "\(noFile)")
            let fliteLanguage = try await say(["--engine", "flite", "--lang", "de", "hallo"])
            #expect(fliteLanguage.status == 64 && fliteLanguage.stderr.contains("US English"), "\(fliteLanguage)")
            for outcome in [empty, invalid, stdin, missing, speed, nul, voice, late, url, noFile, fliteLanguage] {
                #expect(outcome.stderr.split(separator: "\n").count == 1, "one line: \(outcome.stderr)")
            }
        }
    }

    @Test("an engine that crashes mid-render fails the item with 70; the daemon plays on")
    func engineCrash() async throws {
        try await withDaemonRuntime { runtime in
            let directory = try scratch("say-crash")
            let engine = try fakeEngine(in: directory, "\"$REAL\" \"$@\" | head -c 20000\nkill -SEGV $$")
            let capture = try Harness.capturePath("say-crash")
            try await runtime.startDaemon(
                device: Harness.fileDevice(capture),
                environment: ["PATH": engine.path, "XDG_CACHE_HOME": directory])
            let crashed = try await runtime.announce(["say", Self.text])
            #expect(crashed.status == 70 && crashed.stderr.contains("espeak-ng: crashed (signal 11)"), "\(crashed)")
            let tone = try await runtime.announce(["play", try Tones.clip(440)])
            #expect(tone.status == 0, "the daemon plays on after a crashed engine: \(tone)")
            // Nothing of a failed render is cached, and no temporary file is left (every render
            // here crashes within the first sentence's 40 KB).
            let cached = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/announce/speech")) ?? []
            #expect(cached.isEmpty, "\(cached)")
        }
    }

    @Test("a stop while the engine renders nothing ends the play at once as stopped (75), killing the engine")
    func stopDuringAStalledRender() async throws {
        try await withDaemonRuntime { runtime in
            let directory = try scratch("say-stall")
            // A duration nothing else on the machine sleeps, matched whole: `pgrep -f "sleep 40"`
            // also found a `sleep 400` of another program and failed the test.
            let stall = "sleep 40.0417"
            let engine = try fakeEngine(in: directory, "exec \(stall)")
            try await runtime.startDaemon(
                device: "null", environment: ["PATH": engine.path, "XDG_CACHE_HOME": directory])
            let queued = try await runtime.announce(["say", "--no-wait", Self.text])
            let id = try #require(queued.stdout.split(separator: "\n").first.map(String.init), "\(queued)")
            let watcher = try runtime.client()
            let reply = try await offPool { try watcher.call(#"{"v":1,"op":"wait","ids":["\#(id)"]}"#) }
            try #require(reply.ok, "\(reply)")
            // The engine is running (it logged its run) when the stop comes.
            let deadline = monotonicNow() + 10
            while runs(engine.runs) == 0 && monotonicNow() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            let stopped = monotonicNow()
            try await runtime.control("stop")
            let finished = try await offPool {
                try watcher.events(until: { $0.event == "finished" && $0.id == id }, timeout: 15)
            }
            #expect(
                finished.last?.outcome?.kind == "cancelled", "a stopped utterance is cancelled, not failed: \(finished)"
            )
            #expect(
                monotonicNow() - stopped < 3,
                "the stop took \(monotonicNow() - stopped) s: it waited for the stalled engine")
            // SIGKILL reaches its process group at once; a loaded machine may take a moment to end it.
            var sleeping = try await Runner.run("pgrep", ["-x", "-f", stall])
            let gone = monotonicNow() + 3
            while !sleeping.stdout.isEmpty && monotonicNow() < gone {
                try await Task.sleep(for: .milliseconds(20))
                sleeping = try await Runner.run("pgrep", ["-x", "-f", stall])
            }
            #expect(sleeping.stdout.isEmpty, "the stalled engine was left running: \(sleeping.stdout)")
        }
    }

    @Test("a repeated announcement costs no render: the second say runs no engine and plays the same samples")
    func cache() async throws {
        try await withDaemonRuntime { runtime in
            let directory = try scratch("say-cache")
            let engine = try fakeEngine(in: directory, "exec \"$REAL\" \"$@\"")
            let first = try Harness.capturePath("say-cache-1")
            let second = try Harness.capturePath("say-cache-2")
            try await runtime.startDaemon(
                device: Harness.fileDevice(first),
                environment: ["PATH": engine.path, "XDG_CACHE_HOME": directory])
            let once = try await runtime.announce(["say", Self.text])
            try #require(once.status == 0, "\(once)")
            let rendered = runs(engine.runs)
            #expect(rendered == 3, "three sentences, three renders: \(rendered)")
            let twice = try await runtime.announce(["say", "-d", Harness.fileDevice(second), Self.text])
            try #require(twice.status == 0, "\(twice)")
            #expect(
                runs(engine.runs) == rendered, "the repeat ran the engine \(runs(engine.runs) - rendered) more times")
            let a = try await SpeechAudio.samples(first)
            let b = try await SpeechAudio.samples(second)
            #expect(a == b, "the cached render plays the same samples (\(a.count) and \(b.count) frames)")
            // `announce cache` sees them (python's json reads it); `cache clear` deletes them, and
            // the next say renders again.
            let listed = try await runtime.announce(["cache", "--json"], environment: ["XDG_CACHE_HOME": directory])
            let check = try await Runner.run(
                "python3",
                [
                    "-c",
                    """
                    import json, sys
                    o = json.loads(sys.argv[1]); c = o["caches"][0]
                    assert o["v"] == 1 and c["kind"] == "speech" and c["entries"] == 3 and c["bytes"] > 100000, o
                    assert c["path"] == sys.argv[2] + "/announce/speech", c
                    """, listed.stdout, directory
                ])
            #expect(listed.status == 0 && check.status == 0, "\(listed) \(check)")
            let cleared = try await runtime.announce(["cache", "clear"], environment: ["XDG_CACHE_HOME": directory])
            #expect(cleared.status == 0 && cleared.stdout.contains("3 renders deleted"), "\(cleared)")
            let again = try await runtime.announce(["say", "-d", Harness.fileDevice(second), Self.text])
            #expect(
                again.status == 0 && runs(engine.runs) == rendered * 2,
                "after cache clear the engine renders again: \(runs(engine.runs))")
        }
    }

    @Test("the spool keeps the text, not audio; after kill -9 the utterance is rendered again and played")
    func durable() async throws {
        try await withDaemonRuntime { runtime in
            let directory = try scratch("say-durable")
            let capture = try Harness.capturePath("say-durable")
            let environment: [String: String?] = ["XDG_CACHE_HOME": directory]
            let first = try await runtime.startDaemon(device: "null", environment: environment)
            try await runtime.control("pause")
            let queued = try await runtime.announce(["say", "--no-wait", "-d", Harness.fileDevice(capture), Self.text])
            try #require(queued.status == 0, "\(queued)")
            let entries = runtime.spoolEntries().filter { $0.hasSuffix(".json") }
            try #require(entries.count == 1, "\(runtime.spoolEntries())")
            let record = try String(contentsOfFile: runtime.spoolPath + "/" + entries[0], encoding: .utf8)
            #expect(
                record.contains(Self.text) && record.utf8.count < 4096, "the spooled item holds the text: \(record)")
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: 10))
            try await runtime.startDaemon(device: "null", environment: environment)
            let waiter = try runtime.client()
            let id = try #require(queued.stdout.split(separator: "\n").first.map(String.init))
            try await runtime.control("resume")
            let reply = try await offPool { try waiter.call(#"{"v":1,"op":"wait","ids":["\#(id)"]}"#) }
            #expect(reply.ok, "\(reply)")
            let finished = try await offPool {
                try waiter.events(until: { $0.event == "finished" && $0.id == id }, timeout: 30)
            }
            #expect(finished.last?.outcome?.kind == "played", "\(finished)")
            let heard = try await SpeechAudio.samples(capture)
            let reference = try await SpeechAudio.samples(try await SpeechAudio.espeakRender(Self.text))
            try #require(heard.count > 6615 && reference.count > 6615, "heard \(heard.count) frames")
            #expect(SpeechAudio.correlation(heard[..<6615], reference[..<6615]) >= 0.99)
        }
    }

    @Test("100 KB of text is accepted, starts at once and plays in bounded memory")
    func longText() async throws {
        try await withDaemonRuntime { runtime in
            let directory = try scratch("say-long")
            let textPath = directory + "/text"
            // Sentences that differ, so that each is a render of its own (the cache would play a repeat).
            let text = (1...1500).map { "This is sentence \($0) of a very long announcement that goes on and on. " }
                .joined()
            try #require(text.utf8.count > 100_000)
            try text.write(toFile: textPath, atomically: true, encoding: .utf8)
            let daemon = try await runtime.startDaemon(device: "null", environment: ["XDG_CACHE_HOME": directory])
            let queued = try await Runner.run(
                "sh", ["-c", "exec \"$0\" say --no-wait - < \"$1\"", try Harness.binary(), textPath],
                environment: runtime.environment)
            try #require(queued.status == 0, "\(queued)")
            let id = try #require(queued.stdout.split(separator: "\n").first.map(String.init))
            let watcher = try runtime.client()
            try watcher.send(#"{"v":1,"op":"wait","ids":["\#(id)"],"progress":true}"#)
            // Let it render and play a few dozen sentences on the unpaced null device.
            let progress = try await offPool {
                try watcher.events(
                    until: { $0.event == "progress" && $0.id == id && ($0.heard ?? 0) > 60 }, timeout: 60)
            }
            #expect(progress.contains { $0.event == "progress" })
            let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
            let rss =
                status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap {
                    Int($0.split(separator: " ")[1])
                } ?? 0
            #expect(rss > 0 && rss < 60_000, "the daemon's peak RSS is \(rss) kB")
            let cancel = try await runtime.announce(["cancel", id])
            #expect(cancel.status == 0, "\(cancel)")
        }
    }
}
