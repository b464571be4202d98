import AnnounceEngine
import AnnounceModel
import AnnounceOutput
import AnnounceSources
import AnnounceSystem
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// One client on the daemon's socket: buffered, non-blocking, line-framed.
final class Connection {
    let fd: Int32
    /// On the system queue: who the socket says the client is (DESIGN §8); nil on a user's own.
    let caller: Caller?
    private var input: [UInt8] = []
    /// Descriptors that came with the bytes in `input` (SCM_RIGHTS), each with the byte of
    /// `input` it came with: a line takes those that came with its bytes.
    private var descriptors: [(position: Int, fd: Int32)] = []
    private var output: [UInt8] = []
    private var outputStart = 0
    /// Items whose events this client waits for.
    var waiting: Set<ItemID> = []
    /// It also wants every progress tick of the items it waits for.
    var wantsProgress = false
    /// The last `waiting` sent for each item it waits for, to send only changes.
    var reportedWaits: [ItemID: Event] = [:]
    /// `events`: it gets every event.
    var subscribed = false
    /// Close once the output is flushed (after an error reply).
    private(set) var closing = false
    /// The peer went away or misbehaved: drop it now.
    private(set) var dead = false

    /// A client that reads nothing is dropped rather than buffered without end.
    static let maxPendingOutput = 4 << 20

    init(fd: Int32, caller: Caller? = nil) {
        self.fd = fd
        self.caller = caller
    }

    deinit {
        close(fd)
        for held in descriptors { close(held.fd) }
    }

    var wantsToWrite: Bool { output.count > outputStart }

    /// The client closed its end entirely, not just its writing half (a client that gave up
    /// on a stopped daemon): no one is left to learn what its request did.
    var peerHungUp: Bool {
        var state = pollfd(fd: fd, events: 0, revents: 0)
        return poll(&state, 1, 0) == 1 && state.revents & Int16(POLLHUP) != 0
    }

    /// One request line and the descriptors that came with its bytes; whoever takes it closes them.
    struct Line {
        var bytes: ArraySlice<UInt8>
        var descriptors: [Int32]
    }

    /// Reads what arrived; returns complete lines, or a line-too-long error. More descriptors
    /// held than one request may hand over (`Limits.maxHandedFiles`) drop the client.
    func readLines() -> (lines: [Line], oversized: Bool) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var received = [Int32](repeating: -1, count: 253)
        // At most 1 MiB a call: a client that keeps sending does not keep the control thread
        // here (poll brings it back for the rest).
        var reads = 0
        while !dead && !closing && reads < 16 {
            reads += 1
            var count: Int32 = 0
            let got = chunk.withUnsafeMutableBytes { bytes in
                received.withUnsafeMutableBufferPointer {
                    announce_receive_descriptors(
                        fd, bytes.baseAddress, bytes.count, $0.baseAddress, Int32($0.count), &count)
                }
            }
            // The kernel gives a message's descriptors with the read that ends in its bytes (it
            // reads no further), so they belong to this chunk's last byte: a client sends them
            // with the first byte of their line.
            for index in 0..<Int(count) { descriptors.append((input.count + max(got, 1) - 1, received[index])) }
            if descriptors.count > Limits.maxHandedFiles {
                dead = true
                break
            }
            if got > 0 {
                input.append(contentsOf: chunk[0..<got])
                if input.count > WireProtocol.maxLineBytes && !input.contains(UInt8(ascii: "\n")) { break }
                continue
            }
            if got == 0 || (got < 0 && -got != EINTR && -got != EAGAIN && -got != EWOULDBLOCK) {
                dead = true
            } else if -got == EINTR {
                continue
            }
            break
        }
        var lines: [Line] = []
        var start = 0
        var oversized = false
        while let newline = input[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if newline - start > WireProtocol.maxLineBytes {
                oversized = true
                break
            }
            let own = descriptors.prefix { $0.position <= newline }
            descriptors.removeFirst(own.count)
            lines.append(Line(bytes: input[start..<newline], descriptors: own.map(\.fd)))
            start = newline + 1
        }
        if !oversized && input.count - start > WireProtocol.maxLineBytes { oversized = true }
        let consumed = oversized ? input.count : start
        input.removeFirst(consumed)
        if oversized {
            for held in descriptors { close(held.fd) }
            descriptors.removeAll()
        }
        descriptors = descriptors.map { ($0.position - consumed, $0.fd) }
        return (lines, oversized)
    }

    func send(_ bytes: [UInt8]) {
        guard !dead else { return }
        output.append(contentsOf: bytes)
        if output.count - outputStart > Self.maxPendingOutput {
            dead = true
            return
        }
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
            if sent > 0 {
                outputStart += sent
                continue
            }
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
