import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tests/Servers/httpd.py (Python's http.server, with redirects, a loop, a stall, an HTML
/// page, ranges, a gate and a server without ranges) on 127.0.0.1 at a port the kernel picks,
/// serving `directory`. It exits by itself after `lifetime` seconds; `stop` ends it sooner
/// (only this pid). With `logging`, `requests()` gives what it was asked and sent.
final class HTTPTestServer: @unchecked Sendable {
    let process: ChildProcess
    let port: Int
    let logPath: String?

    init(directory: String, lifetime: Double = 600, logging: Bool = false) throws {
        let script = Harness.repoRoot.appendingPathComponent("Tests/Servers/httpd.py").path
        let logPath = logging ? "\(try Harness.workResult.get().path)/httpd-\(UUID().uuidString).log" : nil
        self.logPath = logPath
        let (process, line) = try startTelling(
            "httpd.py", ["python3", script, directory, "\(lifetime)"] + (logPath.map { [$0] } ?? []),
            environment: ProcessInfo.processInfo.environment)
        self.process = process
        guard let port = Int(line) else {
            process.stop()
            throw HarnessError("httpd.py said \(line), not a port")
        }
        self.port = port
    }

    deinit { stop() }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// The log's lines so far: `GET PATH range=R if-range=I -> STATUS`, `sent PATH`.
    func requests() -> [String] {
        guard let logPath, let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    func stop() { process.stop(grace: 1) }
}

/// A TCP port on 127.0.0.1 that refuses connections while this lives: bound, never listening.
final class RefusingPort {
    let port: Int
    private let socket: Int32

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { close(fd) }
            throw HarnessError("cannot bind a port: \(String(cString: strerror(errno)))")
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socket) }
}
