import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a server that tells where it listens as its first line on stdout (a port, a bus
/// address), through a FIFO: returns the process and that line, or throws after `within` s.
func startTelling(
    _ name: String, _ arguments: [String], environment: [String: String],
    within seconds: Double = 60
) throws -> (process: ChildProcess, line: String) {
    let work = try Harness.workResult.get().path
    let fifo = "\(work)/\(name)-\(UUID().uuidString).told"
    guard mkfifo(fifo, 0o600) == 0 else { throw HarnessError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
    defer { unlink(fifo) }
    // Read-write, as StdinFeeder's writer: the open waits for no one, and the server's line is
    // what the poll below waits for.
    let reader = open(fifo, O_RDWR | O_CLOEXEC | O_NONBLOCK)
    guard reader >= 0 else { throw HarnessError("open \(fifo): \(String(cString: strerror(errno)))") }
    defer { close(reader) }
    let process = try ChildProcess(name, arguments, environment: environment, stdout: fifo, stderr: fifo + ".stderr")
    var line: [UInt8] = []
    var waiting = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
    while line.last != UInt8(ascii: "\n") {
        guard poll(&waiting, 1, Int32(seconds * 1000)) == 1 else {
            process.stop()
            throw HarnessError("\(name) told nothing within \(seconds) s")
        }
        var chunk = [UInt8](repeating: 0, count: 256)
        let got = read(reader, &chunk, chunk.count)
        if got > 0 { line += chunk[..<got] }
    }
    return (process, String(decoding: line.dropLast(), as: UTF8.self))
}
