/// The config file's `[mqtt]` section: the broker this host's zones go through (docs/ZONES.md).
///
/// ```
/// [mqtt]
/// broker = mqtts://broker.home.arpa:8883
/// host = kitchen
/// zones = downstairs, kitchen
/// username = announce-kitchen
/// password-file = ~/.config/announce/mqtt-password
/// ca-file = /etc/ssl/home-ca.pem
/// cert-file = /etc/announce/kitchen.pem
/// key-file = /etc/announce/kitchen.key
/// discovery = yes
/// ```
///
/// Without a `broker`, zones are off: nothing connects and libmosquitto is not loaded.
public struct MQTTSettings: Equatable, Sendable {
    public var broker: Broker
    /// This host's name on the broker; nil: the machine's hostname.
    public var host: String?
    /// The zones this host plays for, besides `all` and its own host topic.
    public var zones: [String] = []
    public var username: String?
    public var password: String?
    /// A file whose first line is the password (kept out of the config file).
    public var passwordFile: String?
    /// TLS: the CA that signed the broker's certificate (nil: the system's CAs).
    public var caFile: String?
    /// TLS: this host's certificate and key, for brokers that authenticate clients by certificate.
    public var certFile: String?
    public var keyFile: String?
    /// `discovery`: announce the host and its zones to Home Assistant (MQTT discovery).
    public var discovery = true

    public struct Broker: Equatable, Sendable, CustomStringConvertible {
        public var host: String
        public var port: Int
        /// `mqtts://`: TLS.
        public var tls: Bool

        /// `mqtt://HOST[:PORT]` (1883) or `mqtts://HOST[:PORT]` (8883); an IPv6 address in brackets.
        public init?(parsing text: String) {
            let lower = text.lowercased()
            let rest: Substring
            if lower.hasPrefix("mqtt://") {
                tls = false
                rest = text.dropFirst(7)
            } else if lower.hasPrefix("mqtts://") {
                tls = true
                rest = text.dropFirst(8)
            } else {
                return nil
            }
            let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
            var hostPart = authority
            var port = tls ? 8883 : 1883
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { return nil }
                hostPart = authority[authority.index(after: authority.startIndex)..<close]
                let after = authority[authority.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { return nil }
                    port = number
                }
            } else if let colon = authority.lastIndex(of: ":") {
                guard let number = Int(authority[authority.index(after: colon)...]) else { return nil }
                port = number
                hostPart = authority[..<colon]
            }
            guard !hostPart.isEmpty, (1...65535).contains(port),
                hostPart.unicodeScalars.allSatisfy({
                    $0.isASCII && $0.value > 32 && !"/@?#".unicodeScalars.contains($0)
                })
            else { return nil }
            host = String(hostPart)
            self.port = port
        }

        public var description: String {
            "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        }
    }

    public init(broker: Broker) { self.broker = broker }

    /// `[mqtt]` as read so far.
    struct Draft {
        var broker: Broker?
        var settings = MQTTSettings(broker: Broker(parsing: "mqtt://localhost")!)
        var seen = false

        /// The settings, or nil with a warning when the section has no broker.
        func finish(warn: (String) -> Void) -> MQTTSettings? {
            guard seen else { return nil }
            guard let broker else {
                warn("[mqtt] has no broker: zones are off")
                return nil
            }
            if (settings.certFile == nil) != (settings.keyFile == nil) {
                warn("[mqtt] cert-file and key-file go together: zones are off")
                return nil
            }
            var settings = settings
            settings.broker = broker
            return settings
        }
    }
}
