/// Every failure a user can see, with the exit status DESIGN §1 promises for it.
public enum AnnounceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The command line asked for something impossible (64).
    case usage(String)
    /// The input is not decodable audio (65).
    case undecodable(path: String, reason: String)
    /// The input cannot be opened: missing, no permission, a directory (66).
    case cannotOpen(path: String, reason: String)
    /// The audio device is missing, busy or refused the format (69).
    case deviceUnavailable(device: DeviceName, reason: String)
    /// Another program holds the device (69); the reason names it.
    case deviceBusy(device: DeviceName, reason: String)
    /// The daemon cannot run or cannot be reached: its runtime directory is unsafe,
    /// it failed to start (69, as for a device: nothing can play).
    case unavailable(String)
    /// An error the daemon reported, with the exit status it maps to.
    case daemon(code: Int32, message: String)
    /// A program announce runs (a speech engine) failed: crashed, exited with an error or
    /// stalled (70, as for software failing).
    case programFailed(program: String, reason: String)
    /// A bug or an unexpected system failure (70).
    case `internal`(String)
    /// The caller may not do this on the system queue (77, EX_NOPERM): not in its group, not
    /// the item's owner, a control only root gives, a path or device only the client may open.
    case notPermitted(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: 64
        case .undecodable: 65
        case .cannotOpen: 66
        case .deviceUnavailable, .deviceBusy, .unavailable: 69
        case .daemon(let code, _): code
        case .internal, .programFailed: Self.internalExitCode
        case .notPermitted: Self.notPermittedExitCode
        }
    }

    /// One line, naming the file or device first.
    public var description: String {
        switch self {
        case .usage(let message): message
        // An empty name is said as '' (as cat and ls say it), not as nothing before the colon.
        case .undecodable(let path, let reason): "\(path.isEmpty ? "''" : path): \(reason)"
        case .cannotOpen(let path, let reason): "\(path.isEmpty ? "''" : path): \(reason)"
        case .deviceUnavailable(let device, let reason), .deviceBusy(let device, let reason):
            "device '\(device)': \(reason)"
        case .unavailable(let message): message
        case .daemon(_, let message): message
        case .programFailed(let program, let reason): "\(program): \(reason)"
        case .internal(let message): "internal error: \(message)"
        case .notPermitted(let message): message
        }
    }
}

extension AnnounceError {
    /// A bug or an unexpected failure (70): also a failed outcome or reply that names no code.
    public static let internalExitCode: Int32 = 70
    /// Not permitted (EX_NOPERM): the system queue's refusals.
    public static let notPermittedExitCode: Int32 = 77
}

extension AnnounceError {
    /// The same error with `path` said as `label` wherever it names it: audio from stdin is
    /// checked in a file of the client's making, which the user never named (`stdin: empty`).
    public func naming(_ path: String, as label: String) -> AnnounceError {
        func relabel(_ text: String) -> String { text.replacing(path, with: label) }
        return switch self {
        case .usage(let message): .usage(relabel(message))
        case .undecodable(let named, let reason): .undecodable(path: relabel(named), reason: relabel(reason))
        case .cannotOpen(let named, let reason): .cannotOpen(path: relabel(named), reason: relabel(reason))
        case .unavailable(let message): .unavailable(relabel(message))
        case .daemon(let code, let message): .daemon(code: code, message: relabel(message))
        case .internal(let message): .internal(relabel(message))
        case .notPermitted(let message): .notPermitted(relabel(message))
        case .deviceUnavailable, .deviceBusy, .programFailed: self
        }
    }
}
