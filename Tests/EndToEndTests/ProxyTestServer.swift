import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// tinyproxy, a real HTTP proxy (Debian's tinyproxy-bin), on 127.0.0.1 at a free port, for the
/// tests that announce goes through the caller's proxy: started by the test, stopped by pid,
/// at most `lifetime` seconds in any case. It adds a Via header to what it forwards, which the
/// test servers report (`proxied`), and logs each request.
final class TestProxy: @unchecked Sendable {
    let port: Int
    let directory: String
    private let process: ChildProcess

    static let program = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    init(lifetime: Int = 120) throws {
        guard let program = Self.program else {
            throw HarnessError("tinyproxy is not installed (make deps-test installs it)")
        }
        directory = try Harness.workResult.get().path + "/proxy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var started: (Int, ChildProcess)?
        for _ in 0..<5 where started == nil {
            let port = try TestBroker.freePort()
            let config = "\(directory)/tinyproxy.conf"
            try """
            Port \(port)
            Listen 127.0.0.1
            Allow 127.0.0.1
            Timeout 60
            MaxClients 20
            LogFile "\(directory)/tinyproxy.log"
            LogLevel Connect
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let child = try ChildProcess(
                "tinyproxy", ["/usr/bin/timeout", String(lifetime), program, "-d", "-c", config],
                environment: ProcessInfo.processInfo.environment,
                stdout: "\(directory)/stdout.log", stderr: "\(directory)/stderr.log")
            if TestBroker.waitForListener(port: port, child: child) { started = (port, child) } else { child.stop() }
        }
        guard let (port, child) = started else { throw HarnessError("tinyproxy did not start; see \(directory)") }
        self.port = port
        process = child
    }

    deinit { stop() }

    var url: String { "http://127.0.0.1:\(port)" }

    /// tinyproxy's log: a `Request` line names each URL it was asked for.
    var log: String { (try? String(contentsOfFile: "\(directory)/tinyproxy.log", encoding: .utf8)) ?? "" }

    func stop() { process.stop(grace: 2) }

    /// A client's environment that names this proxy for http (and nothing bypasses it), where
    /// the tests' own environment bypasses every proxy for 127.0.0.1.
    var callerEnvironment: [String: String?] {
        [
            "http_proxy": url, "no_proxy": nil, "NO_PROXY": nil, "https_proxy": nil, "HTTPS_PROXY": nil,
            "all_proxy": nil, "ALL_PROXY": nil
        ]
    }

    /// A daemon's own environment naming a proxy where nothing listens: were it used, nothing
    /// would play.
    static let deadProxyEnvironment: [String: String?] = [
        "http_proxy": "http://127.0.0.1:9", "all_proxy": "http://127.0.0.1:9", "no_proxy": nil, "NO_PROXY": nil
    ]
}
