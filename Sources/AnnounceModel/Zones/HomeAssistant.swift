/// Home Assistant's MQTT discovery (docs/ZONES.md, Home Assistant): each host announces a
/// notify entity for itself and one for each of its zones, retained on
/// `homeassistant/notify/OBJECT/config`. Home Assistant's `notify.send_message` then publishes
/// the message's text on the entity's say topic, at QoS 0 (at most once: a text is never
/// spoken twice, and a host that is away does not get it later), and each host speaks it.
public enum HomeAssistant {
    public static let prefix = "homeassistant"

    /// One entity's discovery message: its topic and its JSON.
    public struct Entity: Encodable, Equatable, Sendable {
        public struct Device: Encodable, Equatable, Sendable {
            public var identifiers: [String]
            public var name: String
            public var manufacturer = "announce"
            public var model: String
        }

        public var name: String
        public var uniqueID: String
        public var objectID: String
        public var commandTopic: String
        public var qos = 0
        public var availabilityTopic: String?
        public var availabilityTemplate: String?
        public var payloadAvailable: String?
        public var payloadNotAvailable: String?
        public var device: Device

        private enum CodingKeys: String, CodingKey {
            case name, qos, device
            case uniqueID = "unique_id", objectID = "object_id", commandTopic = "command_topic"
            case availabilityTopic = "availability_topic", availabilityTemplate = "availability_template"
            case payloadAvailable = "payload_available", payloadNotAvailable = "payload_not_available"
        }

        /// Where it is published (retained).
        public var topic: String { "\(HomeAssistant.prefix)/notify/\(objectID)/config" }
    }

    /// The host's own entity, available while its status says online, and its zones' (`all`'s too).
    public static func entities(host: String, zones: [String]) -> [Entity] {
        let hostID = objectID("announce_\(host)")
        var entities = [
            Entity(
                name: "announce \(host)", uniqueID: hostID, objectID: hostID,
                commandTopic: ZoneTopic.hostSay(host).name,
                availabilityTopic: ZoneTopic.status(host).name, availabilityTemplate: "{{ value_json.state }}",
                payloadAvailable: "online", payloadNotAvailable: "offline",
                device: .init(identifiers: [hostID], name: "announce \(host)", model: "announce daemon"))
        ]
        for zone in zones + [ZoneTopic.allZone] {
            let zoneID = objectID("announce_zone_\(zone)")
            entities.append(
                Entity(
                    name: "announce zone \(zone)", uniqueID: zoneID, objectID: zoneID,
                    commandTopic: ZoneTopic.zoneSay(zone).name,
                    device: .init(identifiers: [zoneID], name: "announce zone \(zone)", model: "announce zone")))
        }
        return entities
    }

    /// Home Assistant's object ids: lowercase letters, digits and `_`.
    static func objectID(_ name: String) -> String {
        String(name.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }

    /// The speech a say topic's payload asks for, or why none: UTF-8 text without NUL, not
    /// empty, at most `Limits.maxSpeechBytes`.
    public static func text(_ payload: [UInt8]) -> Result<String, ZoneRefusal> {
        guard payload.count <= Limits.maxSpeechBytes else {
            return .failure(
                ZoneRefusal(id: nil, reason: "text of \(payload.count) bytes is over \(Limits.maxSpeechBytes)"))
        }
        guard let text = String(validating: payload, as: UTF8.self), !payload.contains(0) else {
            return .failure(ZoneRefusal(id: nil, reason: "text is not UTF-8, or has a NUL byte"))
        }
        guard text.contains(where: { !$0.isWhitespace }) else {
            return .failure(ZoneRefusal(id: nil, reason: "text is empty"))
        }
        return .success(text)
    }
}
