/// Where zone messages go on the MQTT broker (docs/ZONES.md). Version 1 of the layout; every
/// topic starts with `announce/v1/`, so a broker ACL can give announce one subtree.
///
/// - `announce/v1/host/HOST/play`: a play for one host (QoS 1)
/// - `announce/v1/zone/ZONE/play`: a play for every host of ZONE (`all`: every host)
/// - `announce/v1/result/REQUEST/HOST`: HOST's outcome of play REQUEST (QoS 1)
/// - `announce/v1/status/HOST`: HOST's state, retained; its last will says `offline`
/// - `announce/v1/host/HOST/cancel`, `announce/v1/zone/ZONE/cancel`: a play's cancel (QoS 1)
/// - `announce/v1/host/HOST/say`, `announce/v1/zone/ZONE/say`: plain text to speak (Home
///   Assistant's notify entities publish there)
public enum ZoneTopic: Equatable, Sendable {
    case hostPlay(String)
    case zonePlay(String)
    case result(request: PlayID, host: String)
    case status(String)
    case hostSay(String)
    case zoneSay(String)
    case hostCancel(String)
    case zoneCancel(String)

    public static let root = "announce/v1"
    /// The zone every host is in.
    public static let allZone = "all"

    public var name: String {
        switch self {
        case .hostPlay(let host): "\(Self.root)/host/\(host)/play"
        case .zonePlay(let zone): "\(Self.root)/zone/\(zone)/play"
        case .result(let request, let host): "\(Self.root)/result/\(request)/\(host)"
        case .status(let host): "\(Self.root)/status/\(host)"
        case .hostSay(let host): "\(Self.root)/host/\(host)/say"
        case .zoneSay(let zone): "\(Self.root)/zone/\(zone)/say"
        case .hostCancel(let host): "\(Self.root)/host/\(host)/cancel"
        case .zoneCancel(let zone): "\(Self.root)/zone/\(zone)/cancel"
        }
    }

    /// Every host's status.
    public static let statusPattern = "\(root)/status/+"
    /// Every host's result of one request.
    public static func resultPattern(request: PlayID) -> String { "\(root)/result/\(request)/+" }

    /// The topic `name` is, when it is one of the layout's with valid names; nil otherwise.
    public init?(_ name: String) {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 4, parts[0] == "announce", parts[1] == "v1" else { return nil }
        switch (parts[2], parts.count) {
        case ("host", 5), ("zone", 5):
            let (name, forHost) = (parts[3], parts[2] == "host")
            guard ZoneName.problem(name, kind: parts[2]) == nil else { return nil }
            switch parts[4] {
            case "play": self = forHost ? .hostPlay(name) : .zonePlay(name)
            case "say": self = forHost ? .hostSay(name) : .zoneSay(name)
            case "cancel": self = forHost ? .hostCancel(name) : .zoneCancel(name)
            default: return nil
            }
        case ("result", 5) where PlayID(parts[3]).isWellFormed && ZoneName.problem(parts[4], kind: "host") == nil:
            self = .result(request: PlayID(parts[3]), host: parts[4])
        case ("status", 4) where ZoneName.problem(parts[3], kind: "host") == nil: self = .status(parts[3])
        default: return nil
        }
    }
}

/// Host and zone names: one topic level each, so nothing that MQTT reads as structure.
public enum ZoneName {
    public static let maxBytes = 64

    /// Why `name` cannot be a host's or zone's name (`kind`: "host", "zone"), or nil. Letters,
    /// digits, `.`, `_` and `-`, 1 to 64 bytes, starting with a letter or digit.
    public static func problem(_ name: String, kind: String) -> String? {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maxBytes else { return "\(kind) name must be 1 to \(maxBytes) bytes" }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
        }
        guard isAlphanumeric(bytes[0]),
            bytes.allSatisfy({
                isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
            })
        else {
            return
                "\(kind) name '\(name)' may have only letters, digits, '.', '_' and '-' (and starts with a letter or digit)"
        }
        return nil
    }
}
