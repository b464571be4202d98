import AnnounceModel
import AnnounceSystem
import CALSA
import Logging
import Synchronization

/// Where ALSA's own diagnostics go. ALSA calls its error handler from any
/// thread; the C trampoline in CALSA/shim.h formats the message and lands here.
public enum ALSALogBridge {
    private static let logger = Mutex<Logger?>(nil)

    /// Route ALSA's messages to `logger` (debug level) instead of raw stderr lines.
    public static func install(_ logger: Logger) {
        Self.logger.withLock { $0 = logger }
        _ = announce_alsa_route_errors_to_logger()
    }

    static func log(file: String, line: Int, function: String, error: Int32, message: String) {
        guard let logger = Self.logger.withLock({ $0 }) else { return }
        logger.debug(
            "ALSA \(function): \(message)\(error != 0 ? " (\(systemErrorMessage(error)))" : "")",
            metadata: ["alsa.file": "\(file):\(line)"])
    }
}

@_cdecl("announce_alsa_log")
func announceALSALog(
    _ file: UnsafePointer<CChar>?, _ line: Int32, _ function: UnsafePointer<CChar>?,
    _ error: Int32, _ message: UnsafePointer<CChar>?
) {
    ALSALogBridge.log(
        file: file.map { String(cString: $0) } ?? "?", line: Int(line),
        function: function.map { String(cString: $0) } ?? "?",
        error: error < 0 ? -error : error,
        message: message.map { String(cString: $0) } ?? "")
}
