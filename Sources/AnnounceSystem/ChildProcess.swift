import AnnounceModel
import CPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program run for its output (a speech engine): its input is given whole up front (a
/// memory file, so a long input can never block against its unread output), its output read
/// from a pipe with a bound on how long it may stay silent (or, for a program that must seek
/// in its output, from a memory file once it has ended), its stderr kept for the error
/// message. Killed with its process group and reaped when dropped, or when its play's
/// `Cancellation` fires (a stopped play does not wait for a stalled engine).
public final class ChildProcess {
    public let pid: pid_t
    /// Whether it was reaped (its pid may then be another process's): a cancellation kills
    /// it only before.
    private let reaped = ReapGuard()
    private var cancellation: Cancellation?
    private var cancellationToken: Int?
    /// A standby's stdin, until `send` gives it its input.
    private var inputPipe: Int32 = -1
    private let output: Int32
    private let errors: Int32
    private var status: Int32?
    private let outputKind: Output

    /// Where its standard output goes.
    public enum Output: Sendable {
        /// A pipe, read as it is written.
        case pipe
        /// A memory file: a real file the program may seek in and reopen (/dev/stdout), read
        /// once it has ended.
        case memoryFile
    }

    /// How it ended.
    public enum Exit: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Starts `executable` (an absolute path) with `arguments` and `input` on its stdin.
    public convenience init(
        executable: String, arguments: [String], input: [UInt8], output outputKind: Output = .pipe,
        cancellation: Cancellation? = nil
    ) throws(AnnounceError) {
        try self.init(
            executable: executable, arguments: arguments, input: .some(input), output: outputKind,
            cancellation: cancellation)
    }

    /// Started now, its input given later by `send` (a pipe it waits on meanwhile): a standby
    /// that has done its start-up (a speech engine's voice loaded) by the time it is needed.
    public static func standby(executable: String, arguments: [String], output: Output = .pipe) throws(AnnounceError)
        -> ChildProcess
    {
        try ChildProcess(executable: executable, arguments: arguments, input: nil, output: output, cancellation: nil)
    }

    private init(
        executable: String, arguments: [String], input: [UInt8]?, output outputKind: Output,
        cancellation: Cancellation?
    ) throws(AnnounceError) {
        var inputEnds: [Int32] = [-1, -1]
        if input == nil, announce_cloexec_pipe(&inputEnds) != 0 {
            throw .internal("pipe: \(systemErrorMessage(errno))")
        }
        // The standby's write end is kept only once it runs; on any failure before, closed.
        var started = false
        defer { if !started && inputEnds[1] >= 0 { close(inputEnds[1]) } }
        let inputFD =
            try input.map { bytes throws(AnnounceError) in try Self.memoryFile(bytes, name: "input") } ?? inputEnds[0]
        defer { close(inputFD) }
        let errorFD = try Self.memoryFile([], name: "stderr")
        // (read end, the child's end): the same memory file for both when it is one.
        var ends: [Int32] = [0, 0]
        switch outputKind {
        case .pipe:
            guard announce_cloexec_pipe(&ends) == 0 else {
                close(errorFD)
                throw .internal("pipe: \(systemErrorMessage(errno))")
            }
        case .memoryFile:
            do {
                ends[0] = try Self.memoryFile([], name: "output")
            } catch {
                close(errorFD)
                throw error
            }
            ends[1] = ends[0]
        }
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let pid = announce_spawn_piped(executable, &argv, inputFD, ends[1], errorFD)
        if outputKind == .pipe { close(ends[1]) }
        guard pid > 0 else {
            close(ends[0])
            close(errorFD)
            throw .unavailable("cannot run \(executable): \(systemErrorMessage(-pid))")
        }
        self.pid = pid
        self.outputKind = outputKind
        output = ends[0]
        errors = errorFD
        inputPipe = inputEnds[1]
        started = true
        if let cancellation { attach(cancellation) }
    }

    /// From now on `cancellation` kills it (a standby taken by a play).
    public func attach(_ cancellation: Cancellation) {
        self.cancellation = cancellation
        cancellationToken = cancellation.register { [reaped, pid] in reaped.killUnlessReaped(pid) }
    }

    /// A standby's input, whole: written and closed (at most a pipe's 64 KiB, so it never blocks
    /// against the output nobody reads yet). Throws when it is gone.
    public func send(_ bytes: [UInt8]) throws(AnnounceError) {
        guard inputPipe >= 0 else { return }
        defer {
            close(inputPipe)
            inputPipe = -1
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(inputPipe, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw .internal("writing its input: \(systemErrorMessage(errno))") }
            offset += written
        }
    }

    /// It has not ended (a standby nobody killed). Reaps it when it has.
    public var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
        reaped.markReaped()
        status = raw
        return false
    }

    deinit {
        if inputPipe >= 0 { close(inputPipe) }
        if status == nil {
            kill(-pid, SIGKILL)
            _ = reap()
        }
        close(output)
        close(errors)
    }

    /// Reads up to `count` bytes of its output; 0 at the end. Throws when it has written
    /// nothing for `stallSeconds`.
    public func read(into buffer: UnsafeMutableRawPointer, count: Int, stallSeconds: Double) throws(AnnounceError)
        -> Int
    {
        if outputKind == .memoryFile && status == nil {
            // Nothing can be read before it ends: the stall is the whole run.
            let ended = announce_wait_exit(pid, Int32(stallSeconds * 1000))
            if ended == 0 { throw .internal("no output for \(Int(stallSeconds)) s") }
            reap()
            lseek(output, 0, SEEK_SET)
        }
        while true {
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(stallSeconds * 1000))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { throw .internal("no output for \(Int(stallSeconds)) s") }
            let got = Glibc.read(output, buffer, count)
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw .internal("reading its output: \(systemErrorMessage(errno))") }
            return got
        }
    }

    /// Waits for it to end (after its output ended).
    public func wait() -> Exit {
        reap()
    }

    /// Its stderr so far, as one line (the last non-empty one), for an error message.
    public var errorLine: String? {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let size = lseek(errors, 0, SEEK_END)
        let got = bytes.withUnsafeMutableBytes { pread(errors, $0.baseAddress, 4096, max(0, size - 4096)) }
        guard got > 0 else { return nil }
        let text = String(decoding: bytes[0..<got], as: UTF8.self)
        return text.split(whereSeparator: \.isNewline).last.map(String.init)
    }

    /// Ends it now (a stopped play, a seek): its whole process group.
    public func terminate() {
        guard status == nil else { return }
        kill(-pid, SIGKILL)
        _ = reap()
    }

    @discardableResult
    private func reap() -> Exit {
        if status == nil {
            cancellation?.remove(cancellationToken)
            reaped.markReaped()
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            status = raw
        }
        let raw = status ?? 0
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        return raw & 0x7f == 0 ? .exited((raw >> 8) & 0xff) : .signalled(raw & 0x7f)
    }

    private static func memoryFile(_ bytes: [UInt8], name: String) throws(AnnounceError) -> Int32 {
        let fd = announce_memory_file("announce-" + name)
        guard fd >= 0 else { throw .internal("memfd_create: \(systemErrorMessage(-fd))") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                close(fd)
                throw .internal("memfd write: \(systemErrorMessage(errno))")
            }
            offset += written
        }
        lseek(fd, 0, SEEK_SET)
        return fd
    }

    /// `name` on `PATH` (without one, the usual bin directories): an executable regular file's
    /// absolute path, or nil.
    public static func find(_ name: String, path: String? = getenv("PATH").map { String(cString: $0) }) -> String? {
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        for directory in directories where directory.hasPrefix("/") {
            let candidate = directory + "/" + name
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }
}

/// Marks a child as reaped before `waitpid`, so that a kill from another thread (an
/// cancellation) reaches it while it is at most a zombie, never a process that took its pid.
private final class ReapGuard: Sendable {
    private let reaped = Mutex(false)

    func markReaped() {
        reaped.withLock { $0 = true }
    }

    func killUnlessReaped(_ pid: pid_t) {
        reaped.withLock { reaped in
            if !reaped { kill(-pid, SIGKILL) }
        }
    }
}
