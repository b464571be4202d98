/// Every failure a user can see, with the exit status DESIGN §1 promises for it.
public enum AnnounceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The command line asked for something impossible (64).
    case usage(String)
    /// The input is not decodable audio (65).
    case undecodable(path: String, reason: String)
    /// The input cannot be opened: missing, no permission, a directory (66).
    case cannotOpen(path: String, reason: String)
    /// The audio device is missing, busy or refused the format (69).
    case deviceUnavailable(device: String, reason: String)
    /// A bug or an unexpected system failure (70).
    case `internal`(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: 64
        case .undecodable: 65
        case .cannotOpen: 66
        case .deviceUnavailable: 69
        case .internal: 70
        }
    }

    /// One line, naming the file or device first.
    public var description: String {
        switch self {
        case .usage(let message): message
        case .undecodable(let path, let reason): "\(path): \(reason)"
        case .cannotOpen(let path, let reason): "\(path): \(reason)"
        case .deviceUnavailable(let device, let reason): "device '\(device)': \(reason)"
        case .internal(let message): "internal error: \(message)"
        }
    }
}
