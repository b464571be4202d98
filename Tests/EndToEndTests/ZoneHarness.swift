import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A mosquitto broker on 127.0.0.1 at a free port, with a generated config, for the zone tests:
/// started by the test, stopped (by pid) when it ends, at most `lifetime` seconds in any case.
final class TestBroker: @unchecked Sendable {
    let port: Int
    let directory: String
    let scheme: String
    private let config: String
    private let lifetime: Int
    private let lock = NSLock()
    private var process: ChildProcess

    static let program = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var isInstalled: Bool { program != nil }

    /// `persistent`: the broker keeps sessions, subscriptions and queued messages across a restart.
    /// `tls`: its listener speaks TLS with these files, and wants a client certificate and a password.
    /// `extra`: more lines for its config (a password file, an ACL).
    init(persistent: Bool = false, tls: TestPKI? = nil, extra: String = "", lifetime: Int = 300) throws {
        scheme = tls == nil ? "mqtt" : "mqtts"
        directory = try Harness.workResult.get().path + "/broker-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        config = "\(directory)/mosquitto.conf"
        self.lifetime = lifetime
        var started: (Int, ChildProcess)?
        for _ in 0..<5 where started == nil {
            let port = try Self.freePort()
            try """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence \(persistent)
            persistence_location \(directory)/
            user \(Self.userName)
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            \(tls.map { """
                    cafile \($0.ca)
                    certfile \($0.serverCertificate)
                    keyfile \($0.serverKey)
                    require_certificate true
                    allow_anonymous false
                    password_file \($0.passwords)
                    """ } ?? "")
            \(extra)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let child = try Self.launch(config: config, lifetime: lifetime, log: "\(directory)/broker.log")
            if Self.waitForListener(port: port, child: child) { started = (port, child) } else { child.stop() }
        }
        guard let (port, child) = started else {
            throw HarnessError("mosquitto did not start; see \(directory)/broker.log")
        }
        self.port = port
        process = child
    }

    /// Started as root, mosquitto would become the user `mosquitto`, who cannot write its database here.
    static var userName: String { getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "nobody" }

    /// mosquitto with `config`; `timeout` bounds its life even if the test process dies first.
    private static func launch(config: String, lifetime: Int, log: String) throws -> ChildProcess {
        guard let program else { throw HarnessError("mosquitto is not installed (make deps-test installs it)") }
        return try ChildProcess(
            "mosquitto", ["/usr/bin/timeout", String(lifetime), program, "-c", config],
            environment: ProcessInfo.processInfo.environment, stdout: log, stderr: log)
    }

    /// Stops the broker (SIGTERM: a persistent one saves its database).
    func halt() throws {
        let old = lock.withLock { process }
        old.signal(SIGTERM)
        guard old.waitForExit(timeout: 10) != nil || !old.isRunning else {
            throw HarnessError("mosquitto did not stop")
        }
    }

    /// Stops the broker and starts it again on its port.
    func restart() throws {
        try halt()
        try start()
    }

    /// Starts the broker again on its port after `halt`.
    func start() throws {
        let child = try Self.launch(config: config, lifetime: lifetime, log: "\(directory)/broker-2.log")
        guard Self.waitForListener(port: port, child: child) else {
            throw HarnessError("mosquitto did not start again")
        }
        lock.withLock { process = child }
    }

    var url: String { "\(scheme)://127.0.0.1:\(port)" }

    func stop() { lock.withLock { process }.stop() }

    var log: String { (try? String(contentsOfFile: "\(directory)/broker.log", encoding: .utf8)) ?? "" }

    /// A port the kernel had free a moment ago (mosquitto cannot tell which one it took).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw HarnessError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Connects until the broker listens (at most 10 s) or its process ends.
    static func waitForListener(port: Int, child: ChildProcess) -> Bool {
        let deadline = monotonicNow() + 10
        var pause: useconds_t = 2000
        while monotonicNow() < deadline && child.isRunning {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            usleep(pause)
            pause = min(pause * 2, 100_000)
        }
        return false
    }

    /// `mosquitto_pub` of `file`'s bytes to `topic` (QoS 1), with `options` (`-r`: retained; MQTT 5 properties).
    func publish(_ topic: String, file: String, options: [String] = []) async throws {
        let outcome = try await Runner.run(
            "mosquitto_pub", ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic, "-f", file] + options)
        try #require(outcome.status == 0, "mosquitto_pub: \(outcome)")
    }
}

/// One host of a zone test: its own runtime directory, config file ([mqtt] with its name and
/// zones) and file: capture device, and its daemon.
/// The hosts of one test: every daemon started through it is stopped when the test ends, also
/// when it fails (a restarted host's daemon too: its runtime knows each one it started).
final class ZoneHosts {
    private(set) var all: [ZoneHost] = []
    private var runtimes: [DaemonRuntime] = []

    static func with(_ body: (ZoneHosts) async throws -> Void) async throws {
        let hosts = ZoneHosts()
        do {
            try await body(hosts)
        } catch {
            for runtime in hosts.runtimes { await runtime.cleanup() }
            throw error
        }
        for runtime in hosts.runtimes { await runtime.cleanup() }
    }

    @discardableResult
    func start(
        _ name: String, zones: [String], broker: TestBroker, daemon: Bool = true,
        extraConfig: String = ""
    ) async throws -> ZoneHost {
        let host = try await ZoneHost.start(
            name, zones: zones, broker: broker, daemon: daemon, extraConfig: extraConfig
        ) {
            runtimes.append($0)
        }
        all.append(host)
        return host
    }
}

struct ZoneHost: Sendable {
    let name: String
    let zones: [String]
    let runtime: DaemonRuntime
    let capture: String
    let daemon: DaemonProcess?

    /// A runtime whose config file names `broker`, `name` and `zones`; with `daemon`, its
    /// daemon runs on a file: device capturing to `capture`.
    static func start(
        _ name: String, zones: [String], broker: TestBroker, daemon: Bool = true, extraConfig: String = "",
        created: (DaemonRuntime) -> Void = { _ in }
    ) async throws -> ZoneHost {
        let home = try Harness.workResult.get().path + "/zone-config-\(name)-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: home + "/announce", withIntermediateDirectories: true)
        try """
        \(Harness.baseConfig)
        [mqtt]
        broker = \(broker.url)
        host = \(name)
        \(zones.isEmpty ? "" : "zones = " + zones.joined(separator: ", "))
        \(extraConfig)
        """.write(toFile: home + "/announce/config", atomically: true, encoding: .utf8)
        let capture = try Harness.capturePath("zone-\(name)-\(UUID().uuidString.prefix(6))")
        let runtime = try DaemonRuntime(environment: ["XDG_CONFIG_HOME": home])
        created(runtime)
        let process = daemon ? try await runtime.startDaemon(device: Harness.fileDevice(capture)) : nil
        // The broker acknowledged its subscriptions: what is published from now on reaches it.
        if let process { try await waitForLog(process, "zones: subscribed to") }
        return ZoneHost(name: name, zones: zones, runtime: runtime, capture: capture, daemon: process)
    }

    /// Waits (at most 40 s) for `text` in the daemon's log, `count` times.
    static func waitForLog(_ daemon: DaemonProcess, _ text: String, count: Int = 1) async throws {
        let deadline = monotonicNow() + 40
        while daemon.log.components(separatedBy: text).count - 1 < count {
            guard monotonicNow() < deadline, daemon.isRunning else {
                throw HarnessError("no '\(text)' in the log: \(daemon.log)")
            }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }

    /// The capture's samples, read by sox to its end (the file device may not have finalised the header).
    func captured() async throws -> [UInt8] { try await ZoneHost.rawSamples(capture, ignoreLength: true) }

    /// `path`'s 16-bit samples as sox reads them.
    static func rawSamples(_ path: String, ignoreLength: Bool = false) async throws -> [UInt8] {
        let raw = path + ".raw.s16"
        let outcome = try await Runner.run("sox", (ignoreLength ? ["--ignore-length"] : []) + [path, "-t", "s16", raw])
        try #require(outcome.status == 0, "sox \(path): \(outcome)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
    }
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate made by openssl, and a
/// mosquitto password file (mosquitto_passwd) with one user, `kitchen`.
struct TestPKI: Sendable {
    let directory: String
    var ca: String { directory + "/ca.pem" }
    var serverCertificate: String { directory + "/server.pem" }
    var serverKey: String { directory + "/server.key" }
    var clientCertificate: String { directory + "/client.pem" }
    var clientKey: String { directory + "/client.key" }
    var passwords: String { directory + "/passwords" }
    var passwordFile: String { directory + "/kitchen-password" }
    static let password = "s3cret kitchen"

    static func make() async throws -> TestPKI {
        let directory = try Harness.workResult.get().path + "/pki-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = """
            set -e
            cd "$1"
            openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj "/CN=announce test CA"
            openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1"
            echo subjectAltName=IP:127.0.0.1 > san.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 1 -extfile san.ext
            openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=kitchen"
            openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 1
            touch passwords && chmod 600 passwords
            mosquitto_passwd -b passwords kitchen "$2"
            printf '%s\\n' "$2" > kitchen-password
            """
        let outcome = try await Runner.run("/bin/sh", ["-c", script, "sh", directory, password])
        try #require(outcome.status == 0, "making the test PKI: \(outcome)")
        return TestPKI(directory: directory)
    }
}
