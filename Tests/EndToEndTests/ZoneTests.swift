import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Zones over MQTT (docs/ZONES.md), end to end: a mosquitto broker on loopback, daemons with
/// their own runtime directories, host names, zones and file: capture devices, and `announce`
/// on a sending host with no daemon of its own.
@Suite(
    "Zones over MQTT", .serialized,
    .enabled(if: TestBroker.isInstalled, "mosquitto is not installed (make deps-test installs it)"))
struct ZoneTests {
    @Test("a zone play reaches exactly its hosts, bit for bit; one line per host; hosts --json")
    func zonePlay() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            for (name, zones) in [("kitchen", ["downstairs"]), ("garage", ["downstairs"]), ("office", ["upstairs"])] {
                try await hosts.start(name, zones: zones, broker: broker)
            }
            let desk = try await hosts.start("desk", zones: [], broker: broker, daemon: false)

            // Every host's retained status, read by python's json.
            let listed = try await desk.runtime.announce(["hosts", "--json"])
            try #require(listed.status == 0, "\(listed)")
            for line in listed.stdout.split(separator: "\n") { _ = JSONOutputTests.check(line, as: "hosts") }
            #expect(
                try await pythonSummary(
                    listed.stdout, #"" ".join([h["host"], h["state"], ",".join(h["zones"]), str(h["queued"])])"#)
                    == ["garage online downstairs 0", "kitchen online downstairs 0", "office online upstairs 0"])

            let tone = try Tones.clip(440, seconds: 0.5)
            let kitchenEvents = try await hosts.all[0].runtime.subscribe()
            let garageEvents = try await hosts.all[1].runtime.subscribe()
            let played = try await desk.runtime.announce(["play", tone, "--zone", "downstairs", "--wait-timeout", "30"])
            #expect(played.status == 0 && played.stdout == "garage: played\nkitchen: played\n", "\(played)")
            // Both start together (a common start time, ZoneLimits.startLead after sending): their
            // first frames reached the devices close in time (one clock here; a loose bound for a loaded machine).
            let starts = try await offPool {
                try [kitchenEvents, garageEvents].map {
                    try #require($0.events(until: { $0.event == "started" }).last?.time)
                }
            }
            #expect(abs(starts[0] - starts[1]) < 0.25, "started at \(starts)")
            let source = try await ZoneHost.rawSamples(tone)
            for host in hosts.all where host.name == "kitchen" || host.name == "garage" {
                let captured = try await host.captured()
                // The file device pads the last period with silence: the source, then zeros only.
                #expect(
                    captured.count >= source.count && Array(captured.prefix(source.count)) == source
                        && captured.dropFirst(source.count).allSatisfy { $0 == 0 },
                    "\(host.name): \(captured.count) bytes captured for \(source.count)")
            }
            let office = hosts.all.first { $0.name == "office" }!
            #expect(!FileManager.default.fileExists(atPath: office.capture), "office is not downstairs, yet it played")

            // A named host and one nobody has seen: per-host JSON, exit 69 (no answer).
            let named = try await desk.runtime.announce([
                "play", tone, "--host", "office,ghost", "--wait-timeout", "2", "--json"
            ])
            #expect(named.status == 69, "\(named)")
            for line in named.stdout.split(separator: "\n") { _ = JSONOutputTests.check(line, as: "host result") }
            let sent = try await desk.runtime.announce(["play", tone, "--host", "office", "--no-wait", "--json"])
            #expect(sent.status == 0, "\(sent)")
            _ = JSONOutputTests.check(sent.stdout.dropLast(), as: "zone play sent")
            #expect(
                try await pythonSummary(named.stdout, #"" ".join([h["host"], h["result"], str(h["code"])])"#)
                    == ["ghost no-answer 69", "office played 0"])
            let officeCapture = try await office.captured()
            #expect(Array(officeCapture.prefix(source.count)) == source, "office's capture is not the source")

            // A file over 1 MiB does not travel in a message: the sender says to serve it (64), sends nothing.
            let big = try Tones.clip(330, seconds: 12)
            let tooBig = try await desk.runtime.announce(["play", big, "--zone", "downstairs"])
            #expect(
                tooBig.status == 64
                    && tooBig.stderr.hasSuffix(
                        ": more than 1 MiB, the most a zone message carries; serve it over http(s) and play the URL\n"),
                "\(tooBig)")

            // say: each host renders the text itself.
            let said = try await desk.runtime.announce(["say", "hello", "--zone", "upstairs", "--wait-timeout", "30"])
            #expect(said.status == 0 && said.stdout == "office: played\n", "\(said)")
        }
    }

    @Test(
        "a zone play carries its chime and closing tone as bytes: each host plays chime, clip, closing tone back to back, then keeps none of them"
    )
    func zoneChimes() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            for name in ["kitchen", "garage"] { try await hosts.start(name, zones: ["downstairs"], broker: broker) }
            let desk = try await hosts.start("desk", zones: [], broker: broker, daemon: false)
            let tone = try Tones.clip(440, seconds: 0.5)
            let chime = try Tones.clip(880, seconds: 0.2)
            let closing = try Tones.clip(660, seconds: 0.25)
            let played = try await desk.runtime.announce([
                "play", tone, "--zone", "downstairs", "--chime", chime, "--chime-after", closing,
                "--wait-timeout", "30"
            ])
            #expect(played.status == 0 && played.stdout == "garage: played\nkitchen: played\n", "\(played)")
            let expected =
                try await ZoneHost.rawSamples(chime) + ZoneHost.rawSamples(tone) + ZoneHost.rawSamples(closing)
            for host in hosts.all where host.daemon != nil {
                let captured = try await host.captured()
                #expect(
                    captured.count >= expected.count && captured.prefix(expected.count).elementsEqual(expected)
                        && captured.dropFirst(expected.count).allSatisfy { $0 == 0 },
                    "\(host.name): \(captured.count) bytes captured; not the chime, the clip and the closing tone back to back"
                )
                // The outcome took its audio and both chimes out of the host's media directory.
                let media = try FileManager.default.contentsOfDirectory(atPath: host.runtime.path + "/media")
                #expect(media.isEmpty, "\(host.name) kept \(media)")
            }
        }
    }

    @Test("the same play twice plays once; garbage and oversized messages are dropped and every daemon stays up")
    func duplicatesAndGarbage() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let (kitchen, garage, desk) = try await hosts.downstairs(broker)
            let kitchenEvents = try await kitchen.runtime.subscribe()
            let work = try Harness.workResult.get().path

            // One play message, published twice (as a QoS 1 redelivery would bring it).
            let first = try Tones.clip(440, seconds: 0.3)
            let audio = try Data(contentsOf: URL(fileURLWithPath: first)).base64EncodedString()
            let id = String(repeating: "ab", count: 16)
            let message = work + "/dup-\(UUID().uuidString.prefix(6)).json"
            try
                #"{"v":1,"id":"\#(id)","from":"desk","sent":1,"items":[{"item":{"clip":{"path":"dup.wav","gain":1,"pan":0,"loops":0}},"audio":"\#(audio)"}]}"#
                .write(toFile: message, atomically: true, encoding: .utf8)
            try await broker.publish("announce/v1/host/kitchen/play", file: message)
            try await broker.publish("announce/v1/host/kitchen/play", file: message)

            // Garbage, an escape sequence, and a message over the limit, to the whole zone.
            let garbage = work + "/garbage.bin"
            try Data("not json \u{1b}[31m{{{".utf8).write(to: URL(fileURLWithPath: garbage))
            let oversized = work + "/oversized.bin"
            try Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }).write(
                to: URL(fileURLWithPath: oversized))
            // A play with a good id and a bad value that tries to forge a log line.
            let forging = work + "/forging.json"
            try
                #"{"v":1,"id":"\#(String(repeating: "cd", count: 16))","from":"desk","sent":1,"items":[{"item":{"clip":{"path":"x.wav","gain":1,"pan":0,"loops":0},"priority":"\u001b[31mhigh\nFAKE LINE"},"audio":"AAAA"}]}"#
                .write(toFile: forging, atomically: true, encoding: .utf8)
            // A play sent at -1e19 s, with an MQTT 5 message expiry: its wait at the broker (~1e19 s)
            // once trapped the daemon where it made an Int of it.
            let absurd = work + "/absurd.json"
            try
                #"{"v":1,"id":"\#(String(repeating: "ef", count: 16))","from":"desk","sent":-1e19,"items":[{"item":{"clip":{"path":"x.wav","gain":1,"pan":0,"loops":0},"at":1,"expire":1},"audio":"AAAA"}]}"#
                .write(toFile: absurd, atomically: true, encoding: .utf8)
            try await broker.publish("announce/v1/zone/downstairs/play", file: garbage)
            try await broker.publish("announce/v1/zone/downstairs/play", file: oversized)
            try await broker.publish("announce/v1/host/kitchen/play", file: forging)
            try await broker.publish(
                "announce/v1/host/kitchen/play", file: absurd,
                options: ["-V", "5", "-D", "publish", "message-expiry-interval", "60"])

            // A host takes its messages in order: once this play is answered, the ones above were handled.
            let marker = try Tones.clip(880, seconds: 0.3)
            let played = try await desk.runtime.announce([
                "play", marker, "--zone", "downstairs", "--wait-timeout", "30"
            ])
            #expect(played.status == 0 && played.stdout == "garage: played\nkitchen: played\n", "\(played)")
            // The kitchen played the duplicated play once, then the marker (each on a fresh capture:
            // the file device is closed when idle, and reopening it starts the file anew).
            let finished = try await offPool {
                try kitchenEvents.events(until: { $0.event == "finished" && $0.path?.contains("880") == true })
            }
            .filter { $0.event == "finished" }
            #expect(
                finished.map { "\($0.path ?? "?") \($0.outcome?.kind ?? "?")" } == [
                    "dup.wav played", "tone-880-300ms.wav played"
                ])
            #expect(try Tones.heardOrder(capture: kitchen.capture, candidates: [440, 880]) == [880])
            #expect(try Tones.heardOrder(capture: garage.capture, candidates: [440, 880]) == [880])
            for host in [kitchen, garage] {
                #expect(host.daemon?.isRunning == true, "\(host.name) stopped")
                let log = host.daemon?.log ?? ""
                #expect(
                    log.contains("dropped a message on announce/v1/zone/downstairs/play: malformed play"),
                    "\(host.name): \(log)")
                // The hosts asked the broker for no packet over the limit (MQTT 5 Maximum Packet Size):
                // the 3 MiB message never reached them, not even to be refused.
                #expect(!log.contains("bytes is over"), "\(host.name): the broker sent the 3 MiB message: \(log)")
                #expect(!log.contains("\u{1b}"), "\(host.name): an escape reached the log")
            }
            let kitchenLog = kitchen.daemon?.log ?? ""
            #expect(kitchenLog.contains("play \(id) from desk came again; played once"))
            #expect(
                kitchenLog.contains("dropped a message on announce/v1/host/kitchen/play: malformed play: items[0]"),
                "\(kitchenLog)")
            #expect(!kitchenLog.contains("\nFAKE LINE"), "\(kitchenLog)")
            #expect(
                kitchenLog.contains("dropped a message on announce/v1/host/kitchen/play: sent must be 0 to"),
                "\(kitchenLog)")
        }
    }

    @Test("a host away gets its plays when it is back (persistent session), except those that expired meanwhile")
    func offlineHost() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let kitchen = try await hosts.start("kitchen", zones: ["downstairs"], broker: broker)
            let desk = try await hosts.start("desk", zones: [], broker: broker, daemon: false)
            kitchen.daemon?.signal(SIGTERM)
            try #require(await kitchen.daemon?.waitForExit(timeout: 10) == true)

            let kept = try Tones.clip(440, seconds: 0.3)
            let expiring = try Tones.clip(660, seconds: 0.3)
            // Offline: the client does not wait for it (its play waits at the broker).
            let away = try await desk.runtime.announce(["play", kept, "--host", "kitchen", "--wait-timeout", "30"])
            #expect(away.status == 69 && away.stdout == "kitchen: no answer (offline)\n", "\(away)")
            let expired = try await desk.runtime.announce([
                "play", expiring, "--host", "kitchen", "--expire", "1s", "--wait-timeout", "30"
            ])
            #expect(expired.status == 69, "\(expired)")
            // MQTT 5 message expiry (2 s: its 1 s after the 0.3 s lead, rounded up): the broker drops
            // it once that is past on its clock of whole seconds, up to a second late; at 2.5 s it was
            // once still there with 1 s left, and then played within its last 0.3 s. The time passing
            // is what is tested: nothing else to wait on.
            try await Task.sleep(nanoseconds: 4_500_000_000)

            let back = try await kitchen.runtime.startDaemon(device: Harness.fileDevice(kitchen.capture))
            // A play sent now comes after the kept ones: once it is answered, they were handled.
            let marker = try Tones.clip(880, seconds: 0.3)
            let now = try await desk.runtime.announce(["play", marker, "--host", "kitchen", "--wait-timeout", "30"])
            #expect(now.status == 0 && now.stdout == "kitchen: played\n", "\(now)")
            // The expiring one never plays: the broker dropped it, or (its second not yet past there)
            // the host found it expired, its 1 s counted from its common start time.
            let outcomes = try await playedPaths(kitchen)
            #expect(
                outcomes.filter { $0 != "tone-660-300ms.wav expired" } == [
                    "tone-440-300ms.wav played", "tone-880-300ms.wav played"
                ],
                "\(outcomes); log: \(back.log)")
        }
    }

    @Test(
        "a host killed (SIGKILL) with a play pending: the client waits for it (the broker lost it: it may come back); back, it plays and answers it once"
    )
    func killedHost() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let kitchen = try await hosts.start("kitchen", zones: ["downstairs"], broker: broker)
            let desk = try await hosts.start("desk", zones: [], broker: broker, daemon: false)
            let tone = try Tones.clip(440, seconds: 0.3)
            let sender = try Runner.launch(
                ["play", tone, "--zone", "downstairs", "--delay", "2s", "--wait-timeout", "60"],
                environment: desk.runtime.environment, killAfter: 90)
            // Queued, and its items noted beside its id (the log says so after both).
            let first = try #require(kitchen.daemon)
            try await ZoneHost.waitForLog(first, "queued as ")
            let id = try #require(first.log.firstMatch(of: #/queued as ([0-9a-f]{12})/#)?.1)
            first.signal(SIGKILL)
            try #require(await kitchen.daemon?.waitForExit(timeout: 10) == true)
            // The broker says the host is gone (its last will), not that it stopped: the client
            // waits on, and has its answer once the host is back.
            let back = try await kitchen.runtime.startDaemon(device: Harness.fileDevice(kitchen.capture))
            // Restored from its spool, it plays at its time (2 s after it came), and the bridge
            // waits for it again to publish its result. (A `wait` gets its outcome even if it is final already.)
            let waiter = try kitchen.runtime.client()
            _ = try await offPool { try waiter.call(#"{"v":1,"op":"wait","ids":["\#(id)"]}"#) }
            _ = try await offPool { try waiter.events(until: { $0.event == "finished" }) }
            try await ZoneHost.waitForLog(back, "waiting again for play")
            #expect(try await playedPaths(kitchen) == ["tone-440-300ms.wav played"], "log: \(back.log)")
            let outcome = await sender.outcome()
            #expect(outcome.status == 0 && outcome.stdout == "kitchen: played\n", "\(outcome)")
        }
    }

    /// The broker (persistent, as mosquitto with `persistence true`) stopped for 5 s while a
    /// play is in flight, and a play sent as soon as it is back, before the hosts reconnected:
    /// both senders keep their sessions and subscribe again, wait for the hosts the broker lost
    /// (their last wills), and have every result: exit 0, each host playing each play once. A
    /// script that retried on 69 would have played them twice.
    @Test("a broker restarted with plays in flight: the senders reconnect, wait for the hosts, and miss no result")
    func brokerRestartInFlight() async throws {
        let broker = try TestBroker(persistent: true)
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let (kitchen, garage, desk) = try await hosts.downstairs(broker)
            let kitchenDaemon = try #require(kitchen.daemon)
            let garageDaemon = try #require(garage.daemon)
            let early = try Tones.clip(440, seconds: 1)
            let late = try Tones.clip(660, seconds: 0.3)
            let inFlight = try Runner.launch(
                ["play", early, "--zone", "downstairs", "--delay", "1s", "--wait-timeout", "40"],
                environment: desk.runtime.environment, killAfter: 90)
            // Both hosts have it queued: then the broker goes.
            try await ZoneHost.waitForLog(kitchenDaemon, "queued as ")
            try await ZoneHost.waitForLog(garageDaemon, "queued as ")
            try await offPool { try broker.halt() }
            // The outage's length is what is tested: the play is due and heard meanwhile.
            try await Task.sleep(nanoseconds: 5_000_000_000)
            try await offPool { try broker.start() }
            // At once: the hosts are still away (their retry backs off), their last wills retained.
            let afterRestart = try await desk.runtime.announce([
                "play", late, "--zone", "downstairs", "--wait-timeout", "40"
            ])
            #expect(
                afterRestart.status == 0 && afterRestart.stdout == "garage: played\nkitchen: played\n",
                "\(afterRestart)")
            let first = await inFlight.outcome()
            #expect(first.status == 0 && first.stdout == "garage: played\nkitchen: played\n", "\(first)")
            for host in [kitchen, garage] {
                let played = try await playedPaths(host)
                #expect(
                    played == ["tone-440-1000ms.wav played", "tone-660-300ms.wav played"], "\(host.name): \(played)")
            }
        }
    }

    @Test(
        "a broker stopped for 10 s loses nothing and plays nothing twice: senders are told, hosts reconnect, a host away still gets its play"
    )
    func brokerRestart() async throws {
        let broker = try TestBroker(persistent: true)
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let (kitchen, garage, desk) = try await hosts.downstairs(broker)
            garage.daemon?.signal(SIGTERM)
            try #require(await garage.daemon?.waitForExit(timeout: 10) == true)
            let first = try Tones.clip(440, seconds: 0.3)
            let away = try await desk.runtime.announce(["play", first, "--zone", "downstairs", "--wait-timeout", "1"])
            #expect(away.status == 69 && away.stdout == "garage: no answer (offline)\nkitchen: played\n", "\(away)")

            try await offPool { try broker.halt() }
            // While it is down, a sender is told at once (nothing is silently lost).
            let down = try await desk.runtime.announce(["play", first, "--zone", "downstairs"])
            #expect(down.status == 69 && down.stderr.hasSuffix(": Connection refused\n"), "\(down)")
            // The outage's length is what is tested (the hosts' retries back off meanwhile).
            try await Task.sleep(nanoseconds: 10_000_000_000)
            try await offPool { try broker.start() }
            let kitchenDaemon = try #require(kitchen.daemon)
            try await ZoneHost.waitForLog(kitchenDaemon, "zones: subscribed to", count: 2)
            let back = try await garage.runtime.startDaemon(device: Harness.fileDevice(garage.capture))
            let second = try Tones.clip(880, seconds: 0.3)
            let both = try await desk.runtime.announce(["play", second, "--zone", "downstairs", "--wait-timeout", "30"])
            #expect(both.status == 0 && both.stdout == "garage: played\nkitchen: played\n", "\(both)")
            for host in [kitchen, garage] {
                let played = try await playedPaths(host)
                #expect(
                    played == ["tone-440-300ms.wav played", "tone-880-300ms.wav played"],
                    "\(host.name): \(played); \(host.name == "garage" ? back.log : kitchenDaemon.log)")
            }
        }
    }

    /// An XDG_CONFIG_HOME whose announce/config is `text`.
    private static func configHome(_ text: String) throws -> String {
        let home = try Harness.workResult.get().path + "/config-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
        try (Harness.baseConfig + text).write(toFile: home + "/announce/config", atomically: true, encoding: .utf8)
        return home
    }

    /// `path kind` of each outcome `host`'s daemon keeps (outcomes/ID.json), read by python's json, sorted.
    private func playedPaths(_ host: ZoneHost) async throws -> [String] {
        let outcomes = try await Runner.run(
            "python3",
            [
                "-c",
                """
                import glob, json, sys
                for name in glob.glob(sys.argv[1] + '/outcomes/*.json'):
                    e = json.load(open(name))
                    print(e['path'], e['outcome']['kind'])
                """, host.runtime.path
            ])
        try #require(outcomes.status == 0, "\(outcomes)")
        return outcomes.stdout.split(separator: "\n").map(String.init).sorted()
    }

    @Test(
        "mqtts with a private CA, a client certificate and a password: hosts reach each other; a wrong password is refused (69)"
    )
    func tlsAndCredentials() async throws {
        let pki = try await TestPKI.make()
        let broker = try TestBroker(tls: pki)
        defer { broker.stop() }
        let tls = """
            username = kitchen
            password-file = \(pki.passwordFile)
            ca-file = \(pki.ca)
            cert-file = \(pki.clientCertificate)
            key-file = \(pki.clientKey)
            """
        try await ZoneHosts.with { hosts in
            let kitchen = try await hosts.start("kitchen", zones: ["downstairs"], broker: broker, extraConfig: tls)
            let desk = try await hosts.start("desk", zones: [], broker: broker, daemon: false, extraConfig: tls)
            let stranger = try await hosts.start(
                "stranger", zones: [], broker: broker, daemon: false,
                extraConfig: tls.replacingOccurrences(
                    of: "password-file = \(pki.passwordFile)",
                    with: "password = wrong"))
            let tone = try Tones.clip(440, seconds: 0.3)
            let played = try await desk.runtime.announce(["play", tone, "--zone", "downstairs", "--wait-timeout", "30"])
            #expect(played.status == 0 && played.stdout == "kitchen: played\n", "\(played)")
            let refused = try await stranger.runtime.announce(["hosts", "--timeout", "5"])
            #expect(
                refused.status == 69
                    && refused.stderr == "announce: MQTT: the broker refused the connection: Not authorized\n",
                "\(refused)")
        }
    }

    @Test("Ctrl-C on a zone play cancels its items on every host (130), also on a host that gets it later")
    func interrupted() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let (kitchen, garage, desk) = try await hosts.downstairs(broker)
            let kitchenDaemon = try #require(kitchen.daemon)
            let garageDaemon = try #require(garage.daemon)
            garageDaemon.signal(SIGTERM)
            try #require(await garageDaemon.waitForExit(timeout: 10))
            // Away: its play, and then its cancel, wait at the broker. The kitchen's waits its 5 s.
            let tone = try Tones.clip(440, seconds: 0.3)
            let sender = try Runner.launch(
                ["play", tone, "--zone", "downstairs", "--delay", "5s", "--wait-timeout", "60"],
                environment: desk.runtime.environment, killAfter: 90)
            try await ZoneHost.waitForLog(kitchenDaemon, "queued as ")
            let id = try #require(kitchenDaemon.log.firstMatch(of: #/queued as ([0-9a-f]{12})/#)?.1)
            sender.child.signal(SIGINT)
            let outcome = await sender.outcome()
            #expect(outcome.status == 130 && outcome.stdout.isEmpty, "\(outcome)")
            let waiter = try kitchen.runtime.client()
            _ = try await offPool { try waiter.call(#"{"v":1,"op":"wait","ids":["\#(id)"]}"#) }
            let finished = try await offPool { try waiter.events(until: { $0.event == "finished" }) }.last
            #expect(finished?.outcome?.kind == "cancelled", "\(String(describing: finished))")

            let back = try await garage.runtime.startDaemon(device: Harness.fileDevice(garage.capture))
            try await ZoneHost.waitForLog(back, "cancelled by desk")
            // The play came first (it is queued, due in its 5 s), then its cancel.
            #expect(try await playedPaths(garage) == ["tone-440-300ms.wav cancelled"], "\(back.log)")
            #expect(!FileManager.default.fileExists(atPath: garage.capture), "garage played it")
        }
    }

    @Test(
        "the broker ACL of docs/ZONES.md: a host plays what the announcer sends; a play the host itself sends is refused (69)"
    )
    func documentedACL() async throws {
        let work = try Harness.workResult.get().path + "/acl-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // The ACL exactly as the documentation gives it.
        let zonesDoc = try String(contentsOf: Harness.repoRoot.appendingPathComponent("docs/ZONES.md"), encoding: .utf8)
        let acl = try #require(zonesDoc.firstMatch(of: #/```\n(# every host: user name[^`]*)```/#)?.1)
        try String(acl).write(toFile: work + "/acl", atomically: true, encoding: .utf8)
        let users = try await Runner.run(
            "/bin/sh",
            [
                "-c",
                """
                set -e
                touch "$1/passwords" && chmod 600 "$1/passwords"
                mosquitto_passwd -b "$1/passwords" kitchen kitchen-secret
                mosquitto_passwd -b "$1/passwords" announcer announcer-secret
                """, "sh", work
            ])
        try #require(users.status == 0, "\(users)")
        let broker = try TestBroker(
            extra: "allow_anonymous false\npassword_file \(work)/passwords\nacl_file \(work)/acl")
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let kitchen = try await hosts.start(
                "kitchen", zones: ["downstairs"], broker: broker,
                extraConfig: "username = kitchen\npassword = kitchen-secret")
            let desk = try await hosts.start(
                "desk", zones: [], broker: broker, daemon: false,
                extraConfig: "username = announcer\npassword = announcer-secret")
            let tone = try Tones.clip(440, seconds: 0.3)
            let played = try await desk.runtime.announce(["play", tone, "--zone", "downstairs", "--wait-timeout", "30"])
            #expect(played.status == 0 && played.stdout == "kitchen: played\n", "\(played)")
            // The kitchen's own credentials may not make a speaker talk, not even its own.
            let own = try await kitchen.runtime.announce(["play", tone, "--host", "kitchen", "--wait-timeout", "5"])
            #expect(
                own.status == 69 && own.stderr.contains("the broker refused the play on announce/v1/host/kitchen/play"),
                "\(own)")
        }
    }

    @Test("a sender sees every host's retained status, more than the broker sends before acknowledgements (20)")
    func manyHosts() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        let work = try Harness.workResult.get().path
        let names = (1...30).map { String(format: "host%02d", $0) }
        for name in names {
            let status = work + "/status-\(name)-\(UUID().uuidString.prefix(6)).json"
            try #"{"v":1,"host":"\#(name)","zones":["hall"],"state":"online","queued":0}"#.write(
                toFile: status, atomically: true, encoding: .utf8)
            try await broker.publish("announce/v1/status/\(name)", file: status, options: ["-r", "-q", "1"])
        }
        let sender = try await ZoneHost.start("desk", zones: [], broker: broker, daemon: false)
        let listed = try await sender.runtime.announce(["hosts", "--json"])
        try #require(listed.status == 0, "\(listed)")
        let hosts = try await Runner.run(
            "python3",
            [
                "-c",
                """
                import json, sys
                print(" ".join(sorted(json.loads(line)["host"] for line in sys.argv[1].splitlines())))
                """, listed.stdout
            ])
        #expect(hosts.stdout == names.joined(separator: " ") + "\n", "\(hosts); \(listed)")
    }

    @Test(
        "Home Assistant: each host announces its notify entities (retained); a text on a zone's say topic is spoken there, once, a retained one never; a host's status is printed escaped"
    )
    func homeAssistant() async throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            // Retained texts would be spoken again at every (re)subscription: a host takes none.
            let work = try Harness.workResult.get().path
            let retained = work + "/retained-\(UUID().uuidString.prefix(6)).txt"
            try "Retained words".write(toFile: retained, atomically: true, encoding: .utf8)
            try await broker.publish("announce/v1/host/kitchen/say", file: retained, options: ["-r"])
            // A status with a terminal's escape in it: `announce hosts` prints it escaped.
            let evil = work + "/evil-\(UUID().uuidString.prefix(6)).json"
            try
                #"{"v":1,"host":"evil","zones":["z\u001b[2J"],"state":"online","playing":"\u001b]0;owned\u0007x.wav","queued":0}"#
                .write(toFile: evil, atomically: true, encoding: .utf8)
            try await broker.publish("announce/v1/status/evil", file: evil, options: ["-r"])
            let kitchen = try await hosts.start("kitchen", zones: ["downstairs"], broker: broker)
            if let daemon = kitchen.daemon {
                try await ZoneHost.waitForLog(daemon, "ignored a retained message on announce/v1/host/kitchen/say")
            }
            let listed = try await kitchen.runtime.announce(["hosts"])
            #expect(
                listed.status == 0 && !listed.stdout.contains("\u{1b}") && !listed.stdout.contains("\u{07}")
                    && listed.stdout.contains(#"evil  online  zones z\x1b[2J  playing \x1b]0;owned\x07x.wav"#),
                "\(listed)")
            let office = try await hosts.start("office", zones: ["upstairs"], broker: broker)
            let sub = try await Runner.run(
                "mosquitto_sub",
                [
                    "-h", "127.0.0.1", "-p", String(broker.port), "-C", "1", "-W", "10",
                    "-t", "homeassistant/notify/announce_zone_downstairs/config"
                ])
            try #require(sub.status == 0, "\(sub)")
            let fields = try await Runner.run(
                "python3",
                [
                    "-c",
                    """
                    import json, sys
                    e = json.loads(sys.argv[1])
                    print(e["command_topic"], e["unique_id"], e["qos"])
                    """, sub.stdout
                ])
            #expect(fields.stdout == "announce/v1/zone/downstairs/say announce_zone_downstairs 0\n", "\(fields)")

            let events = try await kitchen.runtime.subscribe()
            let text = try Harness.workResult.get().path + "/say-\(UUID().uuidString.prefix(6)).txt"
            try "Dinner is ready".write(toFile: text, atomically: true, encoding: .utf8)
            try await broker.publish("announce/v1/zone/downstairs/say", file: text)
            let finished = try await offPool { try events.events(until: { $0.event == "finished" }) }.last
            #expect(
                finished?.path == "say: \"Dinner is ready\"" && finished?.outcome?.kind == "played",
                "\(String(describing: finished))")
            // A text has no id to be sent again: the host keeps no record of it.
            let records = try FileManager.default.contentsOfDirectory(atPath: kitchen.runtime.path + "/zones/seen")
            #expect(records.isEmpty, "records of texts: \(records)")
            #expect(
                kitchen.daemon?.log.contains("Retained words") == false
                    && kitchen.daemon?.log.contains("say: \"Retained") == false)
            #expect(!FileManager.default.fileExists(atPath: office.capture), "office is not downstairs, yet it spoke")
        }
    }

    @Test("without [mqtt] a daemon loads no libmosquitto and the binary does not link it; with [mqtt] it is loaded")
    func libmosquittoOnlyWhenConfigured() async throws {
        let readelf = try await Runner.run("readelf", ["-d", try Harness.binary()])
        #expect(
            readelf.status == 0 && readelf.stdout.contains("NEEDED") && !readelf.stdout.contains("libmosquitto"),
            "\(readelf)")
        try await withDaemonRuntime { plain in
            let daemon = try await plain.startDaemon(device: "null")
            // a read of procfs to its end
            let maps = try await Runner.run("/bin/cat", ["/proc/\(daemon.pid)/maps"]).stdout
            #expect(maps.contains("libasound") && !maps.contains("libmosquitto"))
            #expect(!daemon.log.contains("zones"), "\(daemon.log)")
        }
        let broker = try TestBroker()
        defer { broker.stop() }
        try await ZoneHosts.with { hosts in
            let kitchen = try await hosts.start("kitchen", zones: [], broker: broker)
            // A broker that is not there: the command says so at once (69), with the reason.
            let nowhere = try await kitchen.runtime.announce(
                ["hosts"],
                environment: [
                    "XDG_CONFIG_HOME": try Self.configHome(
                        "[mqtt]\nbroker = mqtt://127.0.0.1:\(try TestBroker.freePort())\n")
                ])
            #expect(nowhere.status == 69 && nowhere.stderr.hasSuffix(": Connection refused\n"), "\(nowhere)")
            let maps = try await Runner.run("/bin/cat", ["/proc/\(try #require(kitchen.daemon).pid)/maps"]).stdout
            #expect(maps.contains("/libmosquitto.so."), "\(maps)")
        }
    }

    /// `lines` (JSON objects, one a line) read by python's json, each turned into text by `expression` (of `h`), sorted.
    private func pythonSummary(_ lines: String, _ expression: String) async throws -> [String] {
        let file = try Harness.workResult.get().path + "/zone-json-\(UUID().uuidString.prefix(6))"
        try lines.write(toFile: file, atomically: true, encoding: .utf8)
        let script =
            "import json,sys\nfor line in sorted(open(sys.argv[1])):\n    h = json.loads(line)\n    assert h['v'] == 1\n    print(\(expression))"
        let outcome = try await Runner.run("python3", ["-c", script, file])
        try #require(outcome.status == 0, "python3: \(outcome)")
        return outcome.stdout.split(separator: "\n").map(String.init).sorted()
    }
}

extension ZoneHosts {
    /// kitchen and garage in zone downstairs, each with a daemon, and desk, a sender without one.
    func downstairs(_ broker: TestBroker) async throws -> (kitchen: ZoneHost, garage: ZoneHost, desk: ZoneHost) {
        (
            try await start("kitchen", zones: ["downstairs"], broker: broker),
            try await start("garage", zones: ["downstairs"], broker: broker),
            try await start("desk", zones: [], broker: broker, daemon: false)
        )
    }
}
