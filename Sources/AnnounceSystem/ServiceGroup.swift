import AnnounceModel
import Logging

/// A part of the daemon that runs beside its control loop, on threads of its own.
public protocol DaemonService: AnyObject {
    /// Ends it; its threads have ended when this returns.
    func stop()
}

/// The daemon's services in the one order `Daemon.run` starts them, stopped in the reverse
/// order (as swift-service-lifecycle's ServiceGroup does, for threads): a service is stopped
/// before every service it was started after, and one that failed to start stops those started.
public final class ServiceGroup {
    private var started: [(name: String, service: any DaemonService)] = []
    private let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    /// Starts one (`make` starts it) and keeps it for `stopAll`; nil from `make`: not started.
    @discardableResult
    public func start<Service: DaemonService>(_ name: String, _ make: () throws(AnnounceError) -> Service?)
        throws(AnnounceError) -> Service?
    {
        guard let service = try make() else { return nil }
        add(name, service)
        return service
    }

    /// Keeps one started already.
    public func add(_ name: String, _ service: any DaemonService) {
        started.append((name, service))
    }

    /// The names, in start order.
    public var names: [String] { started.map(\.name) }

    /// Stops every service, the last started first. Once. `limit` is told which one it waits for.
    public func stopAll(limit: StopLimit? = nil) {
        while let last = started.popLast() {
            logger.debug("stopping \(last.name)")
            limit?.holding(last.name)
            last.service.stop()
        }
        limit?.holding(nil)
    }
}
