import AnnounceModel
import CSDBus

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to a D-Bus bus through sd-bus. Not thread-safe (sd-bus is not): it lives on
/// the bus thread, which made it.
final class Bus {
    typealias Handler = (BusMessage) -> Bool
    let raw: OpaquePointer
    /// The handlers registered, kept alive as long as the bus (sd-bus holds only their address).
    private var handlers: [HandlerBox] = []
    /// How long a call to another program waits for its answer: a hung player must not hold
    /// announce's own player long, and a slow one on a loaded machine must still be heard.
    static let callTimeoutMicroseconds: UInt64 = 2_000_000

    init(address: String) throws(AnnounceError) {
        if let problem = announce_bus_load() { throw .unavailable(String(cString: problem)) }
        var bus: OpaquePointer?
        let result = announce_bus_open(address, &bus)
        guard result >= 0, let bus else {
            throw .unavailable("cannot connect to the session bus \(address): \(String(cString: strerror(-result)))")
        }
        raw = bus
    }

    deinit { announce_bus_close(raw) }

    var fd: Int32 { announce_bus_fd(raw) }
    var events: Int16 { Int16(truncatingIfNeeded: max(0, announce_bus_events(raw))) }

    /// When sd-bus wants `process` called at the latest (CLOCK_MONOTONIC µs), nil: never.
    var deadline: UInt64? {
        var usec: UInt64 = 0
        guard announce_bus_timeout(raw, &usec) >= 0, usec != UInt64.max else { return nil }
        return usec
    }

    /// Dispatches what has arrived; returns when nothing more is ready.
    func process() throws(AnnounceError) {
        while try check(announce_bus_process(raw)) > 0 {}
    }

    func requestName(_ name: String) throws(AnnounceError) {
        let result = announce_bus_request_name(raw, name)
        guard result >= 0 else {
            throw .unavailable("cannot own \(name) on the session bus: \(String(cString: strerror(-result)))")
        }
    }

    /// Every call to `path`; the handler returns whether it answered it.
    func addObject(_ path: String, _ handler: @escaping Handler) throws(AnnounceError) {
        try check(announce_bus_add_object(raw, path, HandlerBox.trampoline, retain(handler)))
    }

    /// Every message that `rule` (a D-Bus match rule) matches.
    func addMatch(_ rule: String, _ handler: @escaping Handler) throws(AnnounceError) {
        try check(announce_bus_add_match(raw, rule, HandlerBox.trampoline, retain(handler)))
    }

    private func retain(_ handler: @escaping Handler) -> UnsafeMutableRawPointer {
        let box = HandlerBox(handler)
        handlers.append(box)
        return Unmanaged.passUnretained(box).toOpaque()
    }

    func methodCall(to destination: String, path: String, interface: String, member: String) throws(AnnounceError)
        -> BusMessage
    {
        var message: OpaquePointer?
        try check(announce_bus_new_call(raw, destination, path, interface, member, &message))
        return BusMessage(owning: message!)
    }

    func signal(path: String, interface: String, member: String) throws(AnnounceError) -> BusMessage {
        var message: OpaquePointer?
        try check(announce_bus_new_signal(raw, path, interface, member, &message))
        return BusMessage(owning: message!)
    }

    func reply(to call: BusMessage) throws(AnnounceError) -> BusMessage {
        var message: OpaquePointer?
        try check(announce_bus_new_return(call.raw, &message))
        return BusMessage(owning: message!)
    }

    func replyError(to call: BusMessage, name: String, text: String) {
        _ = announce_bus_reply_error(call.raw, name, text)
    }

    /// Sends `message` and waits for its reply (at most `callTimeoutMicroseconds`).
    func call(_ message: BusMessage) throws(BusCallError) -> BusMessage {
        var reply: OpaquePointer?
        var problem = [CChar](repeating: 0, count: 256)
        let result = announce_bus_call(raw, message.raw, Self.callTimeoutMicroseconds, &reply, &problem, problem.count)
        guard result >= 0, let reply else {
            let text = String(decoding: problem.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw BusCallError(
                timedOut: result == -ETIMEDOUT, description: "D-Bus \(message.member ?? "call"): \(text)")
        }
        return BusMessage(owning: reply)
    }

    func send(_ message: BusMessage) throws(AnnounceError) { try check(announce_bus_send(raw, message.raw)) }
}

/// A call that failed: refused by the callee, or not answered in time (it may still act on it).
struct BusCallError: Error, CustomStringConvertible {
    let timedOut: Bool
    let description: String
}

/// A Swift handler behind sd-bus's C callback.
private final class HandlerBox {
    let handler: Bus.Handler
    init(_ handler: @escaping Bus.Handler) { self.handler = handler }

    static let trampoline: announce_bus_handler = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
        return box.handler(BusMessage(borrowing: message)) ? 1 : 0
    }
}
