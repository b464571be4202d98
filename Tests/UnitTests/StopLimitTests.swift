import Logging
import Synchronization
import Testing

@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon's stop is bounded: past the limit, what expires names the service the stop waits
/// for, or the process's exit once every service has stopped; the services stop last-first.
@Suite struct StopLimitTests {
    /// The services' names, in the order they stopped.
    final class Stops: Sendable {
        let names = Mutex<[String]>([])
        var list: [String] { names.withLock { $0 } }
    }

    final class Service: DaemonService {
        let name: String
        let stops: Stops
        let gate: CountingSemaphore?
        init(_ name: String, stops: Stops, gate: CountingSemaphore? = nil) {
            self.name = name
            self.stops = stops
            self.gate = gate
        }
        func stop() {
            gate?.wait()
            stops.names.withLock { $0.append(name) }
        }
    }

    /// What the limit reported.
    final class Expiry: Sendable {
        let holder = Mutex<String?>(nil)
        let told = CountingSemaphore()
        func expired(_ name: String) {
            holder.withLock { $0 = name }
            told.signal()
        }
    }

    /// A group handed to the thread that stops it.
    final class Handed: @unchecked Sendable {
        let group: ServiceGroup
        init(_ group: ServiceGroup) { self.group = group }
    }

    @Test func aStopThatHangsIsNamedWhenTheLimitPasses() {
        let stops = Stops()
        let gate = CountingSemaphore()
        let group = ServiceGroup(logger: Logger(label: "test"))
        group.add("engine", Service("engine", stops: stops))
        group.add("ducker", Service("ducker", stops: stops, gate: gate))
        group.add("socket", Service("socket", stops: stops))
        let expiry = Expiry()
        let handed = Handed(group)
        let stopping = startThread(named: "test-stop") {
            handed.group.stopAll(limit: StopLimit(seconds: 0.1) { expiry.expired($0) })
        }
        #expect(expiry.told.wait(seconds: 5))
        #expect(expiry.holder.withLock { $0 } == "ducker")
        #expect(stops.list == ["socket"])
        gate.signal()
        pthread_join(stopping, nil)
        #expect(stops.list == ["socket", "ducker", "engine"])
    }

    @Test func aStopThatEndsLeavesOnlyTheExitToBlame() {
        let stops = Stops()
        let group = ServiceGroup(logger: Logger(label: "test"))
        group.add("engine", Service("engine", stops: stops))
        let expiry = Expiry()
        group.stopAll(limit: StopLimit(seconds: 0.1) { expiry.expired($0) })
        #expect(stops.list == ["engine"])
        #expect(expiry.told.wait(seconds: 5))
        #expect(expiry.holder.withLock { $0 } == StopLimit.exiting)
    }
}
