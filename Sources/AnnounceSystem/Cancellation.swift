import Synchronization

/// A stop that reaches a read blocked on input, from another thread: what a play's source
/// waits on registers how to end the wait (a speech engine's process: kill it), and the
/// play's control fires it when the play is stopped. Firing twice, or registering after it
/// fired (which runs the action at once), is fine.
public final class Cancellation: Sendable {
    private struct State {
        var fired = false
        var actions: [Int: @Sendable () -> Void] = [:]
        var next = 0
    }
    private let state = Mutex(State())

    public init() {}

    public var isFired: Bool { state.withLock { $0.fired } }

    /// Ends every registered wait, now and from now on.
    public func fire() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            state.fired = true
            defer { state.actions = [:] }
            return Array(state.actions.values)
        }
        for action in actions { action() }
    }

    /// Runs `action` when fired (at once when it already was); the token removes it.
    public func register(_ action: @escaping @Sendable () -> Void) -> Int? {
        let token = state.withLock { state -> Int? in
            guard !state.fired else { return nil }
            state.next += 1
            state.actions[state.next] = action
            return state.next
        }
        if token == nil { action() }
        return token
    }

    public func remove(_ token: Int?) {
        guard let token else { return }
        state.withLock { _ = $0.actions.removeValue(forKey: token) }
    }
}
