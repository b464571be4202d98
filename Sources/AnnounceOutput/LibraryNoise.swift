import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What sound libraries print straight to stderr while a device is opened (JACK's `Cannot connect
/// to server socket`, OSS's complaints). In the daemon stderr is daemon.log: for the length of the
/// open it goes to a scratch file instead, and is dropped, or serves as the reason when the open
/// fails with no better one than `no such device` (the name is defined: its plugin failed). The
/// daemon's own lines go through a descriptor of their own (LogOutput), so none is taken meanwhile.
enum LibraryNoise {
    /// Runs `open` with stderr going to a scratch file (left as it is when that cannot be made).
    static func captured<Result>(_ open: () throws(AnnounceError) -> Result) throws(AnnounceError) -> sending Result {
        try LogOutput.stderrChange.withLock { _ throws(AnnounceError) -> Result in
            let capture = begin()
            do throws(AnnounceError) {
                let opened = try open()
                end(capture)
                return opened
            } catch {
                throw explained(error, by: end(capture))
            }
        }
    }

    /// Where stderr went, and the scratch file it goes to until `end`.
    private struct Capture {
        var scratch: UnsafeMutablePointer<FILE>
        var saved: Int32
    }

    private static func begin() -> Capture? {
        guard let scratch = tmpfile() else { return nil }
        fflush(nil)
        let saved = dup(STDERR_FILENO)
        guard saved >= 0, dup2(fileno(scratch), STDERR_FILENO) >= 0 else {
            if saved >= 0 { close(saved) }
            fclose(scratch)
            return nil
        }
        return Capture(scratch: scratch, saved: saved)
    }

    /// Puts stderr back and returns what was printed meanwhile, a line each.
    @discardableResult
    private static func end(_ capture: Capture?) -> [String] {
        guard let capture else { return [] }
        fflush(nil)
        dup2(capture.saved, STDERR_FILENO)
        close(capture.saved)
        defer { fclose(capture.scratch) }
        return written(to: capture.scratch).filter { !$0.isEmpty }
    }

    /// `no such device` for a defined name says nothing: the library's own words say more
    /// (`jack server is not running or cannot be started`).
    private static func explained(_ error: AnnounceError, by noise: [String]) -> AnnounceError {
        guard case .deviceUnavailable(let device, "no such device") = error,
            let line = noise.first(where: { $0.contains("not running") }) ?? noise.first
        else { return error }
        return .deviceUnavailable(device: device, reason: String(line.prefix(200)))
    }

    private static func written(to file: UnsafeMutablePointer<FILE>) -> [String] {
        let fd = fileno(file)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var offset: off_t = 0
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
            offset += off_t(count)
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
    }
}
