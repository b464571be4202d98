import AnnounceModel
import AnnounceSystem
import AnnounceZones
import ArgumentParser
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `--zone` and `--host`: play on other hosts through the MQTT broker (docs/ZONES.md).
struct ZoneFlags: ParsableArguments {
    @Option(
        long: "zone",
        help:
            "Play on every host of this zone (all: every host), through the config file's [mqtt] broker; repeatable. Prints one line per host and exits with the first host's status that did not play."
    )
    var zones: [String] = []

    @Option(
        long: "host",
        help: "Play on these hosts (comma-separated; repeatable), through the [mqtt] broker.", valueName: "name,...")
    var hostLists: [String] = []

    @Option(
        duration: "wait-timeout",
        help:
            "With --zone or --host: how long to wait for the hosts' outcomes (default 60s); a host that has not answered by then is `no answer` (69)."
    )
    var waitTimeout: TimeSpan?

    var hosts: [String] { hostLists.flatMap { $0.split(separator: ",").map { String($0).trimming(" ") } } }
    var isOn: Bool { !zones.isEmpty || !hostLists.isEmpty }

    static let defaultWaitTimeout = 60.0

    func validate(devices: [DeviceName]) throws {
        for zone in zones {
            if let problem = ZoneName.problem(zone, kind: "zone") {
                throw ValidationError("--zone \(zone): \(problem)")
            }
        }
        for host in hosts {
            if let problem = ZoneName.problem(host, kind: "host") {
                throw ValidationError("--host \(host): \(problem)")
            }
        }
        if waitTimeout != nil && !isOn { throw ValidationError("--wait-timeout goes with --zone or --host") }
        if isOn && !devices.isEmpty {
            throw ValidationError("--device with --zone or --host: each host plays on its own device")
        }
    }

    var targets: ZoneSender.Targets { ZoneSender.Targets(hosts: hosts, zones: zones) }
}

/// `play`/`say` with `--zone`/`--host`: the items go to the hosts through the broker, a file's
/// audio in the message (at most `ZoneLimits.maxAudioBytes` in all; larger: serve it and play
/// the URL), and the hosts' results come back. Returns the exit status.
func submitToZones(_ requests: [ItemRequest], zones: ZoneFlags, delivery: DeliveryFlags, logger: Logger)
    throws(AnnounceError) -> Int32
{
    let (configuration, warnings) = UserConfiguration.load()
    for warning in warnings { logger.warning("\(warning)") }
    guard let settings = configuration.mqtt else {
        throw .usage(
            "--zone and --host need a broker: [mqtt] broker = mqtt://HOST in \(UserConfiguration.defaultPath() ?? "the config file")"
        )
    }
    let items = try requests.map(remoteItem)
    var play = RemotePlay(
        id: PlayID.random(), from: settings.host ?? ZoneBridge.machineName(), sent: SystemClock.wall(), items: items)
    if let problem = play.problem { throw .usage(problem) }
    let timeout = zones.waitTimeout?.seconds ?? ZoneFlags.defaultWaitTimeout
    let sender = try ZoneSender(settings: settings, request: play.id, timeout: min(timeout, 30), waitsFor: timeout)
    let hosts = try sender.hosts(of: zones.targets)
    // The common start time counts from now, once connected (TLS may take a while).
    play.sent = SystemClock.wall()
    play.startTogether()
    try sender.send(play, to: zones.targets)
    if delivery.noWait {
        delivery.json
            ? print(jsonLine(Versioned(SentPlay(id: play.id, hosts: hosts))))
            : output(hosts.map { "\($0): sent" }.joined(separator: "\n"))
        return 0
    }
    let reports = sender.reports(of: hosts, until: SystemClock.monotonic() + timeout)
    // Ctrl-C (SIGTERM, SIGHUP): as for a local play, what it queued is cancelled, on every host.
    if let signal = sender.interruption {
        sender.cancel(play, targets: zones.targets)
        return 128 + signal
    }
    var status: Int32 = 0
    for report in reports {
        let line = HostLine(report)
        if status == 0 { status = line.exitCode }
        if delivery.json { print(jsonLine(Versioned(line))) } else { output("\(report.host): \(line.text)") }
    }
    return status
}

/// An item as it travels: a file's bytes in the message; a URL, speech or a stream as they
/// are; its chimes' bytes.
private func remoteItem(_ request: ItemRequest) throws(AnnounceError) -> RemoteItem {
    var item = request
    item.clip.device = nil
    item.clip.extraDevices = nil
    item.clip.environment = nil
    item.clip.proxies = nil
    item.clip.chime = nil
    item.clip.chimeAfter = nil
    let chime = try request.clip.chime.map { path throws(AnnounceError) in try messageBytes(path, label: path) }
    let chimeAfter = try request.clip.chimeAfter.map { path throws(AnnounceError) in try messageBytes(path, label: path)
    }
    if item.clip.url != nil || item.clip.speech != nil || item.clip.stream != nil {
        if let url = item.clip.url, Clip.urlScheme(of: url) == "file" {
            throw .usage("\(url): a file:// URL names a file of this host; play the file itself with --zone or --host")
        }
        return RemoteItem(item: item, bytes: nil, chime: chime, chimeAfter: chimeAfter)
    }
    // A file, or stdin (stored in the media directory): its bytes go in the message.
    var path = item.clip.file.text
    if let media = item.clip.media { path = MediaDirectory(runtime: try RuntimeDirectory.prepare()).filePath(media) }
    let bytes = try messageBytes(path, label: item.clip.path)
    item.clip.media = nil
    item.clip.pathBytes = nil
    item.clip.path = String(item.clip.path.split(separator: "/").last ?? "audio")
    return RemoteItem(item: item, bytes: bytes, chime: chime, chimeAfter: chimeAfter)
}

/// A file's bytes for a zone message; `label` names it in the error.
private func messageBytes(_ path: String, label: String) throws(AnnounceError) -> [UInt8] {
    // One byte more than the limit tells a file over it from one at it.
    guard let bytes = readFilePrefix(path, limit: ZoneLimits.maxAudioBytes + 1) else {
        throw .cannotOpen(path: label, reason: systemErrorMessage(errno))
    }
    if bytes.count > ZoneLimits.maxAudioBytes {
        throw .usage(
            "\(label): more than \(ZoneLimits.maxAudioBytes >> 20) MiB, the most a zone message carries; serve it over http(s) and play the URL"
        )
    }
    return bytes
}

/// `--no-wait --json`: where the play went.
private struct SentPlay: Encodable {
    var id: PlayID
    var hosts: [String]
}

/// One host's line: `kitchen: played`, `garage: no answer (offline)`, and its JSON object.
struct HostLine: Encodable {
    var host: String
    /// played, dropped, …, failed; `no-answer` when none came in time.
    var result: String
    var reason: String?
    var code: Int32
    /// Each item's outcome, in order (absent without an answer).
    var outcomes: [Outcome]?
    /// The host's last status: online or offline (absent: it never said).
    var state: HostStatus.State?

    init(_ report: ZoneSender.Report) {
        host = report.host
        state = report.status?.state
        if let result = report.result {
            let summary = result.summary
            self.result = summary.kind.rawValue
            reason = summary.reason
            code = summary.exitCode
            outcomes = result.outcomes
        } else {
            self.result = "no-answer"
            reason =
                report.brokerLost
                ? "the broker was lost"
                : report.status == nil
                    ? "never seen on the broker"
                    : report.status?.state == .offline ? "offline" : nil
            code = AnnounceError.unavailable("").exitCode
        }
    }

    var exitCode: Int32 { code }

    var text: String {
        let word = result == "no-answer" ? "no answer" : result
        // A host's reason comes from the broker: its control characters are not the terminal's.
        return reason.map { "\(word) (\(escapedForLog($0)))" } ?? word
    }
}
