import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The sending side of zones, for `play --zone/--host`, `say --zone/--host` and `announce
/// hosts`: a short connection of the client's own to the broker, which learns the hosts from
/// their retained status, publishes the play and collects each host's result. A play's sender
/// keeps a session at the broker while it waits: results published while it was away (the
/// broker restarted, the network dropped) are queued for it, and it subscribes again after
/// every reconnection (a broker that lost its sessions).
public final class ZoneSender {
    /// Which hosts a play goes to.
    public struct Targets: Equatable, Sendable {
        public var hosts: [String]
        public var zones: [String]

        public init(hosts: [String], zones: [String]) {
            self.hosts = hosts
            self.zones = zones
        }
    }

    /// What one targeted host made of the play.
    public struct Report: Sendable {
        public var host: String
        /// Its answer; nil: none came in time.
        public var result: RemoteResult?
        /// Its last status (nil: it never said one).
        public var status: HostStatus?
        /// The sender had lost the broker when it stopped waiting.
        public var brokerLost = false
    }

    private let link: MQTTLink
    private let deadline: Double
    /// Every host's status, as retained on the broker.
    public private(set) var statuses: [String: HostStatus] = [:]
    private var results: [String: RemoteResult] = [:]
    private var acknowledged: Set<Int32> = []
    /// Publications the broker acknowledged with a refusal (MQTT 5: not authorized, by its ACL).
    private var refused: Set<Int32> = []
    private let request: PlayID?
    /// Connected now; false from a loss until the link is back.
    private var isConnected = false
    /// Connected before: a `.connected` now is a reconnection.
    private var wasConnected = false

    /// Connected to the broker and caught up on the retained statuses (and subscribed to the
    /// results of `request`), or an error (69) once `timeout` seconds have passed. A sender
    /// with a `request` keeps its session at the broker for `waitsFor` seconds and a minute.
    public init(settings: MQTTSettings, request: PlayID? = nil, timeout: Double, waitsFor: Double = 0)
        throws(AnnounceError)
    {
        deadline = SystemClock.monotonic() + timeout
        self.request = request
        let clientID = "announce-send-\(getpid())-\(PlayID.random().rawValue.prefix(8))"
        let expiry = request == nil ? nil : UInt32(min(waitsFor.rounded(.up), Double(ZoneLimits.sessionExpiry))) + 60
        link = try MQTTLink(settings: settings, clientID: clientID, sessionExpiry: expiry)
        try link.start()
        try waitFor("connect to \(settings.broker)") { happening throws(AnnounceError) in
            // A command does not wait for a broker that is not there: it says why at once.
            if case .lost(let why) = happening {
                throw .unavailable("MQTT: cannot connect to \(settings.broker): \(why)")
            }
            if case .connected = happening { return true } else { return false }
        }
        let last = try subscribe()
        try waitFor("subscribe at \(settings.broker)") {
            if case .subscribed(last) = $0 { return true } else { return false }
        }
    }

    /// Subscribes to the statuses (and the results); the last subscription's id.
    private func subscribe() throws(AnnounceError) -> Int32 {
        // Retained messages follow their subscription's SUBACK, before the broker reads the next
        // SUBSCRIBE: once the last one is acknowledged, every status is in. At QoS 0: at QoS 1 the
        // broker sends only as many as the client's receive maximum (20) before their PUBACKs, and
        // the rest came after that SUBACK (a sender saw 20 of 30 hosts).
        try link.subscribe(ZoneTopic.statusPattern, qos: 0)
        return if let request { try link.subscribe(ZoneTopic.resultPattern(request: request)) } else {
            try link.subscribe(ZoneTopic.statusPattern, qos: 0)
        }
    }

    deinit { link.close() }

    /// The hosts `targets` reaches: those named, and those whose status lists a zone (all: every host).
    public func hosts(of targets: Targets) throws(AnnounceError) -> [String] {
        var hosts = targets.hosts
        for zone in targets.zones {
            let members = statuses.values.filter { zone == ZoneTopic.allZone || $0.zones.contains(zone) }.map(\.host)
            if members.isEmpty {
                throw .unavailable("zone \(zone): no host has said it is in it (announce hosts lists them)")
            }
            hosts += members
        }
        return Array(Set(hosts)).sorted()
    }

    /// Publishes `play` to each target's topic (a host in a zone and named as well gets the same
    /// id twice, and plays it once) and waits for the broker to take every copy.
    public func send(_ play: RemotePlay, to targets: Targets) throws(AnnounceError) {
        let payload = JSONCoding.encode(play, orElse: "{}")
        var pending: [Int32: String] = [:]
        for topic in targets.zones.map({ ZoneTopic.zonePlay($0).name })
            + targets.hosts.map({ ZoneTopic.hostPlay($0).name })
        {
            pending[try link.publish(topic, payload, expiry: play.expiry)] = topic
        }
        let mids = Set(pending.keys)
        if !mids.isSubset(of: acknowledged) {
            try waitFor("publish the play") { _ in mids.isSubset(of: self.acknowledged) }
        }
        if let mid = mids.intersection(refused).min(), let topic = pending[mid] {
            throw .unavailable("MQTT: the broker refused the play on \(topic) (not authorized: see its ACL)")
        }
    }

    /// Each of `hosts`' results, waiting until each answered, or its daemon said it stopped
    /// (its play waits at the broker for its return), or `until` (monotonic seconds) passed, or
    /// a signal came (`interruption`). A host the broker lost (its last will) is waited for: it
    /// may be reconnecting, and plays what waited for it once back. So is a host that stopped
    /// and comes back meanwhile: it says `online` before it plays.
    public func reports(of hosts: [String], until: Double) -> [Report] {
        link.wakeOnInterrupt()
        func settled(_ host: String) -> Bool { results[host] != nil || statuses[host]?.hasStopped == true }
        while !hosts.allSatisfy(settled), let happening = link.next(until: until) { take(happening) }
        return hosts.map { Report(host: $0, result: results[$0], status: statuses[$0], brokerLost: !isConnected) }
    }

    /// The signal (SIGINT, SIGTERM, SIGHUP) that ended `reports`, if one did: the caller sends
    /// `cancel` and exits with 128 + it.
    public var interruption: Int32? { link.interruption }

    /// Tells the targets that `play` is no longer wanted (each host cancels its items, or never
    /// plays it if it has not come yet), and waits a moment (2 s at most) for the broker to take it.
    public func cancel(_ play: RemotePlay, targets: Targets) {
        let payload = JSONCoding.encode(RemoteCancel(id: play.id, from: play.from), orElse: "{}")
        var mids: Set<Int32> = []
        for topic in targets.zones.map({ ZoneTopic.zoneCancel($0).name })
            + targets.hosts.map({ ZoneTopic.hostCancel($0).name })
        {
            if let mid = try? link.publish(topic, payload, expiry: play.expiry) { mids.insert(mid) }
        }
        let until = SystemClock.monotonic() + 2
        while !mids.isSubset(of: acknowledged), let happening = link.next(until: until, interruptible: false) {
            take(happening)
        }
    }

    /// Takes happenings until `done` says so; a refusal, or the deadline, is an error.
    private func waitFor(_ what: String, _ done: (MQTTLink.Happening) throws(AnnounceError) -> Bool)
        throws(AnnounceError)
    {
        while let happening = link.next(until: deadline) {
            take(happening)
            if case .refused(let reason) = happening {
                throw .unavailable("MQTT: the broker refused the connection: \(reason)")
            }
            if try done(happening) { return }
        }
        throw .unavailable("MQTT: could not \(what) in time")
    }

    private func take(_ happening: MQTTLink.Happening) {
        switch happening {
        case .connected:
            // Again: a broker that lost the session has no subscriptions for it.
            if wasConnected { _ = try? subscribe() }
            (isConnected, wasConnected) = (true, true)
        case .lost:
            isConnected = false
        case .message(let topic, let payload, _, _):
            switch ZoneTopic(topic) {
            case .status(let host)?:
                if payload.isEmpty {
                    statuses[host] = nil
                }  // a cleared retained status
                else if let status = try? JSONCoding.decode(HostStatus.self, from: payload), status.host == host {
                    statuses[host] = status
                }
            case .result(let id, let host)? where id == request:
                if let result = try? JSONCoding.decode(RemoteResult.self, from: payload), result.id == id,
                    result.host == host
                {
                    results[host] = result
                }
            default: break
            }
        case .published(let mid, let accepted):
            acknowledged.insert(mid)
            if !accepted { refused.insert(mid) }
        default: break
        }
    }
}
