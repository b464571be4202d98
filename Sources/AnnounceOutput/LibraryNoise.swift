#if canImport(Glibc)
import Glibc
#endif
import AnnounceModel
import AnnounceSystem

/// What sound libraries print straight to stderr while a device is opened (JACK's `Cannot connect
/// to server socket`, OSS's complaints). In the daemon stderr is daemon.log: for the length of the
/// open it goes to a scratch file instead; the daemon's own log lines written meanwhile (other
/// threads) are put back, the rest is dropped, and serves as the reason when the open fails with
/// no better one than `no such device` (the name is defined: its plugin failed).
enum LibraryNoise {
    /// Where stderr went, and the scratch file it goes to until `end`.
    struct Capture {
        fileprivate var scratch: UnsafeMutablePointer<FILE>
        fileprivate var saved: Int32
    }

    /// Sends stderr to a scratch file (nil when that cannot be done: stderr stays as it is).
    static func begin() -> Capture? {
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

    /// Puts stderr back, with the daemon's own log lines written meanwhile, and returns the rest.
    @discardableResult
    static func end(_ capture: Capture?) -> [String] {
        guard let capture else { return [] }
        fflush(nil)
        dup2(capture.saved, STDERR_FILENO)
        close(capture.saved)
        defer { fclose(capture.scratch) }
        var noise: [String] = []
        for line in written(to: capture.scratch) where !line.isEmpty {
            if isLogLine(line) { writeAll(line + "\n") } else { noise.append(line) }
        }
        return noise
    }

    /// `no such device` for a defined name says nothing: the library's own words say more
    /// (`jack server is not running or cannot be started`).
    static func explained(_ error: AnnounceError, by noise: [String]) -> AnnounceError {
        guard case .deviceUnavailable(let device, "no such device") = error,
              let line = noise.first(where: { $0.contains("not running") }) ?? noise.first else { return error }
        return .deviceUnavailable(device: device, reason: String(line.prefix(200)))
    }

    /// A daemon log line: `2026-11-25T05:51:43.169Z [8223] info: …`.
    private static func isLogLine(_ line: String) -> Bool {
        line.wholeMatch(of: /\d{4}-\d\d-\d\dT[\d:.]+Z \[\d+\] \w+: .*/) != nil
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
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    private static func writeAll(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            bytes = bytes.dropFirst(count)
        }
    }
}
