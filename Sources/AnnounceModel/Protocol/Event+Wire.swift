extension Event {
    /// An event as the JSON object on the wire and in the spool's outcomes (docs/protocol.md,
    /// Events): every kind's fields side by side, each present only for the kinds `Payload` gives it.
    public struct Wire: Codable, Equatable, Sendable {
        public var v = WireProtocol.version
        public var event: EventKind
        public var time: Double
        public var id: ItemID?
        public var path: String?
        public var priority: Priority?
        public var reason: EventReason?
        public var shouldResume: Bool?
        public var heard: Double?
        public var duration: Double?
        public var percent: Int?
        public var outcome: Outcome?
        public var device: String?
        public var format: String?
        public var frames: Int64?
        public var warning: String?
        public var quiet: Bool?
        public var state: QuietSwitch?
        public var until: Double?
        public var ahead: Int?
        public var wait: Double?
        public var at: Double?
        public var title: String?
        public var owner: ItemOwner?

        init(_ kind: EventKind, time: Double, item: EventItem? = nil) {
            event = kind
            self.time = time
            id = item?.id
            path = item?.path
            priority = item?.priority
            owner = item?.owner
        }

        /// The object `event` is sent as.
        public init(_ event: Event) {
            let time = event.time
            switch event.payload {
            case .queued(let item):
                self.init(.queued, time: time, item: item)
            case .started(let item, let heard, let duration, let device, let format):
                self.init(.started, time: time, item: item)
                (self.heard, self.duration, self.device, self.format) = (heard, duration, device, format)
            case .progress(let item, let heard, let duration, let percent):
                self.init(.progress, time: time, item: item)
                (self.heard, self.duration, self.percent) = (heard, duration, percent)
            case .interruptionBegan(let item, let reason, let heard, let device, let warning):
                self.init(.interruptionBegan, time: time, item: item)
                (self.reason, self.heard, self.device, self.warning) = (reason, heard, device, warning)
            case .interruptionEnded(let item, let shouldResume):
                self.init(.interruptionEnded, time: time, item: item)
                self.shouldResume = shouldResume
            case .finished(
                let item, let outcome, let reason, let heard, let duration, let device, let format,
                let frames, let warning):
                self.init(.finished, time: time, item: item)
                (self.outcome, self.reason, self.heard, self.duration) = (outcome, reason, heard, duration)
                (self.device, self.format, self.frames, self.warning) = (device, format, frames, warning)
            case .waiting(let item, let reason, let ahead, let wait, let at, let warning):
                self.init(.waiting, time: time, item: item)
                (self.reason, self.ahead, self.wait, self.at, self.warning) = (reason, ahead, wait, at, warning)
            case .title(let item, let title):
                self.init(.title, time: time, item: item)
                self.title = title
            case .deviceOpened(let device, let format):
                self.init(.deviceOpened, time: time)
                (self.device, self.format) = (device, format)
            case .deviceClosed(let device):
                self.init(.deviceClosed, time: time)
                self.device = device
            case .routeChange(let reason, let device, let format, let warning):
                self.init(.routeChange, time: time)
                (self.reason, self.device, self.format, self.warning) = (reason, device, format, warning)
            case .quiet(let reason, let quiet, let state, let until):
                self.init(.quiet, time: time)
                (self.reason, self.quiet, self.state, self.until) = (reason, quiet, state, until)
            case .paused:
                self.init(.paused, time: time)
            case .resumed:
                self.init(.resumed, time: time)
            }
        }

        var item: EventItem? { id.map { EventItem($0, path: path, priority: priority, owner: owner) } }
    }

    /// The event a JSON object is; one without a field its kind must have is refused.
    public init(_ wire: Wire) throws {
        func required<Value>(_ value: Value?, _ field: String) throws -> Value {
            guard let value else {
                throw DecodingError.valueNotFound(
                    Value.self,
                    DecodingError.Context(codingPath: [], debugDescription: "\(wire.event.rawValue) without \(field)"))
            }
            return value
        }
        let payload: Payload
        switch wire.event {
        case .queued:
            payload = .queued(try required(wire.item, "id"))
        case .started:
            payload = .started(
                try required(wire.item, "id"), heard: wire.heard, duration: wire.duration, device: wire.device,
                format: wire.format)
        case .progress:
            payload = .progress(
                try required(wire.item, "id"), heard: wire.heard, duration: wire.duration, percent: wire.percent)
        case .interruptionBegan:
            payload = .interruptionBegan(
                try required(wire.item, "id"), reason: wire.reason, heard: wire.heard,
                device: wire.device, warning: wire.warning)
        case .interruptionEnded:
            payload = .interruptionEnded(
                try required(wire.item, "id"), shouldResume: try required(wire.shouldResume, "shouldResume"))
        case .finished:
            payload = .finished(
                try required(wire.item, "id"), outcome: try required(wire.outcome, "outcome"), reason: wire.reason,
                heard: wire.heard, duration: wire.duration, device: wire.device, format: wire.format,
                frames: wire.frames, warning: wire.warning)
        case .waiting:
            payload = .waiting(
                try required(wire.item, "id"), reason: wire.reason, ahead: wire.ahead,
                wait: wire.wait, at: wire.at, warning: wire.warning)
        case .title:
            payload = .title(try required(wire.item, "id"), title: wire.title)
        case .deviceOpened:
            payload = .deviceOpened(device: try required(wire.device, "device"), format: wire.format)
        case .deviceClosed:
            payload = .deviceClosed(device: try required(wire.device, "device"))
        case .routeChange:
            payload = .routeChange(
                reason: try required(wire.reason, "reason"), device: try required(wire.device, "device"),
                format: wire.format, warning: wire.warning)
        case .quiet:
            payload = .quiet(
                reason: wire.reason, quiet: try required(wire.quiet, "quiet"), state: try required(wire.state, "state"),
                until: wire.until)
        case .paused:
            payload = .paused
        case .resumed:
            payload = .resumed
        }
        self.init(time: wire.time, payload)
    }
}
