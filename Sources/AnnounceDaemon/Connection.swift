#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem
import AnnounceSources
import AnnounceOutput
import AnnounceEngine

/// One client on the daemon's socket: buffered, non-blocking, line-framed.
final class Connection {
    let fd: Int32
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var outputStart = 0
    /// Items whose events this client waits for.
    var waiting: Set<String> = []
    /// It also wants every progress tick of the items it waits for.
    var wantsProgress = false
    /// The last `waiting` sent for each item it waits for, to send only changes.
    var reportedWaits: [String: Event] = [:]
    /// `events`: it gets every event.
    var subscribed = false
    /// Close once the output is flushed (after an error reply).
    private(set) var closing = false
    /// The peer went away or misbehaved: drop it now.
    private(set) var dead = false

    /// A client that reads nothing is dropped rather than buffered without end.
    static let maxPendingOutput = 4 << 20

    init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    var wantsToWrite: Bool { output.count > outputStart }

    /// The client closed its end entirely, not just its writing half (a client that gave up
    /// on a stopped daemon): no one is left to learn what its request did.
    var peerHungUp: Bool {
        var state = pollfd(fd: fd, events: 0, revents: 0)
        return poll(&state, 1, 0) == 1 && state.revents & Int16(POLLHUP) != 0
    }

    /// Reads what arrived; returns complete lines, or a line-too-long error.
    func readLines() -> (lines: [ArraySlice<UInt8>], oversized: Bool) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !dead && !closing {
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got > 0 {
                input.append(contentsOf: chunk[0..<got])
                if input.count > WireProtocol.maxLineBytes && !input.contains(UInt8(ascii: "\n")) { break }
                continue
            }
            if got == 0 { dead = true }
            else if errno == EINTR { continue }
            else if errno != EAGAIN && errno != EWOULDBLOCK { dead = true }
            break
        }
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var oversized = false
        while let newline = input[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if newline - start > WireProtocol.maxLineBytes { oversized = true; break }
            lines.append(input[start..<newline])
            start = newline + 1
        }
        if !oversized && input.count - start > WireProtocol.maxLineBytes { oversized = true }
        input.removeFirst(oversized ? input.count : start)
        return (lines, oversized)
    }

    func send(_ bytes: [UInt8]) {
        guard !dead else { return }
        output.append(contentsOf: bytes)
        if output.count - outputStart > Self.maxPendingOutput { dead = true; return }
        flush()
    }

    /// Sends a last reply, then closes.
    func sendAndClose(_ bytes: [UInt8]) {
        send(bytes)
        closing = true
        if !wantsToWrite { dead = true }
    }

    func flush() {
        while outputStart < output.count {
            let sent = output.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + outputStart, buffer.count - outputStart, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 { outputStart += sent; continue }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            dead = true
            return
        }
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.count < 65536)
            outputStart = 0
            if closing { dead = true }
        }
    }
}
