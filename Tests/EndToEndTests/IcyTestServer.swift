import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tests/Servers/icy.py, a live radio server with ICY metadata, on 127.0.0.1 at a port the
/// kernel picks (or `port`, to start it again where it was). It exits by itself after
/// `lifetime` seconds; `stop` ends it sooner (only this pid). Its lines after the port say
/// which connections it took and where in its endless body each began.
final class IcyTestServer: @unchecked Sendable {
    let process: ChildProcess
    let port: Int
    private let reader: Int32
    private var pending: [UInt8] = []
    private var lines: [String] = []
    private let lock = NSLock()

    /// One connection the server took: its number and where in the endless body it began.
    struct Connection: Equatable, CustomStringConvertible {
        var number: Int
        var offset: Int
        var description: String { "#\(number) at \(offset)" }
    }

    /// `options`: icy.py's (`--rate`, `--live`, `--metaint`, `--titles`, `--title-every`,
    /// `--drop-after`, `--content-type`).
    init(serving file: String, options: [String] = [], port: Int? = nil, lifetime: Double = 600) throws {
        let work = try Harness.workResult.get().path
        let fifo = "\(work)/icy-\(UUID().uuidString).out"
        guard mkfifo(fifo, 0o600) == 0 else {
            throw HarnessError("mkfifo \(fifo): \(String(cString: strerror(errno)))")
        }
        defer { unlink(fifo) }
        // Read-write, so the open waits for no one; kept for the connection lines.
        reader = open(fifo, O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard reader >= 0 else { throw HarnessError("open \(fifo): \(String(cString: strerror(errno)))") }
        let script = Harness.repoRoot.appendingPathComponent("Tests/Servers/icy.py").path
        do {
            process = try ChildProcess(
                "icy.py", ["python3", script, file, "\(lifetime)"] + (port.map { ["--port", "\($0)"] } ?? []) + options,
                environment: ProcessInfo.processInfo.environment, stdout: fifo, stderr: fifo + ".stderr")
        } catch {
            close(reader)
            throw error
        }
        var first: String?
        do {
            first = try Self.nextLine(reader, &pending, &lines, timeout: 15)
        } catch {
            first = nil
        }
        guard let first, let port = Int(first) else {
            process.stop()
            close(reader)
            throw HarnessError("icy.py told no port within 15 s (it said \(first ?? "nothing"))")
        }
        self.port = port
    }

    deinit {
        stop()
        close(reader)
    }

    func url(_ path: String = "radio") -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Stops it and waits until it has exited (its port is free again).
    func stop() { process.stop(grace: 2) }

    /// The connections taken so far, waiting until there are at least `count` (throws after
    /// `timeout` s). Off the cooperative pool: the play it waits for may need a thread of it.
    func connections(atLeast count: Int, timeout: Double = 20) async throws -> [Connection] {
        try await offPool { try self.waitForConnections(atLeast: count, timeout: timeout) }
    }

    /// `connections(atLeast:)`, then `next` on the same thread: for a step that must follow the
    /// connection at once, even while a loaded run's cooperative pool has no thread free.
    func connections<T: Sendable>(atLeast count: Int, timeout: Double = 20, then next: @escaping @Sendable () -> T)
        async throws -> T
    {
        try await offPool {
            _ = try self.waitForConnections(atLeast: count, timeout: timeout)
            return next()
        }
    }

    private func waitForConnections(atLeast count: Int, timeout: Double) throws -> [Connection] {
        try lock.withLock {
            let deadline = monotonicNow() + timeout
            while true {
                let taken = lines.compactMap { line -> Connection? in
                    let fields = line.split(separator: " ")
                    guard fields.count == 3, fields[0] == "connection", let number = Int(fields[1]),
                        let offset = Int(fields[2])
                    else { return nil }
                    return Connection(number: number, offset: offset)
                }
                if taken.count >= count { return taken }
                let left = deadline - monotonicNow()
                guard left > 0 else {
                    throw HarnessError(
                        "icy.py took \(taken.count) connection(s), not \(count), within \(timeout) s: \(lines)")
                }
                _ = try Self.nextLine(reader, &pending, &lines, timeout: left)
            }
        }
    }

    /// The connections whose requests came through a proxy (`proxied N`), of those told so far:
    /// call after `connections(atLeast:)` (the line comes before its connection's).
    func proxiedConnections() -> [Int] {
        lock.withLock { lines.compactMap { $0.hasPrefix("proxied ") ? Int($0.dropFirst(8)) : nil } }
    }

    /// Waits for one more line from the server and keeps it; nil when none came in time.
    @discardableResult
    private static func nextLine(_ fd: Int32, _ pending: inout [UInt8], _ lines: inout [String], timeout: Double) throws
        -> String?
    {
        let deadline = monotonicNow() + timeout
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                lines.append(line)
                return line
            }
            let left = deadline - monotonicNow()
            guard left > 0 else { return nil }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, Int32(max(1, left * 1000))) == 1 else { continue }
            var chunk = [UInt8](repeating: 0, count: 512)
            let got = read(fd, &chunk, chunk.count)
            if got > 0 { pending += chunk[..<got] }
        }
    }
}

/// A clip for a stream made by sox: `seconds` of a sweep (or a sine when `to` is nil) from
/// `from` Hz, as `path` (its extension chooses MP3 or Ogg Vorbis), with a comment when given.
func makeStreamClip(
    _ path: String, from: Double, to: Double? = nil, seconds: Double, rate: Int = 44100,
    comments: [String] = []
) async throws {
    let frequency = to.map { "\(from)-\($0)" } ?? "\(from)"
    let sox = try await Runner.run(
        "sox",
        ["-R", "-D", "-V1", "-n", "-r", "\(rate)", "-c", "2"]
            + comments.flatMap { ["--add-comment", $0] }
            + (path.hasSuffix(".mp3") ? ["-C", "128"] : [])  // 16000 bytes a second
            + [path, "synth", "\(seconds)", "sine", frequency, "gain", "-6"])
    guard sox.status == 0 else { throw HarnessError("sox could not make \(path): \(sox)") }
}

/// ffmpeg's decoding of `path` (a tool we did not write) as interleaved float samples.
func ffmpegSamples(_ path: String, channels: Int = 2) async throws -> [Double] {
    let raw = path + ".ffmpeg.f32"
    let ffmpeg = try await Runner.run(
        "ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "f32le", "-ac", "\(channels)", raw])
    guard ffmpeg.status == 0 else { throw HarnessError("ffmpeg could not decode \(path): \(ffmpeg)") }
    return try PCM.reference(raw, channels: channels).samples
}
