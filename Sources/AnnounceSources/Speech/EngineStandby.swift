import AnnounceModel
import AnnounceSystem
import Synchronization

/// A speech engine started ahead and waiting for its text: espeak-ng takes ~8 ms to load its
/// voice, one already started answers in under 1 ms (piper loads its model for much longer).
/// The next render with the same command takes it and a new one is started then, so a say
/// after a say starts at once. One at most, ended when unused for `idleSeconds` (an idle
/// daemon keeps no engine around) or with the daemon's engine driver; an engine whose daemon
/// was killed gets an end of input and exits. Only for engines that stream (flite writes a
/// whole file and renders a sentence in milliseconds anyway).
public final class EngineStandby: Sendable {
    private struct Waiting: @unchecked Sendable {
        // Handed from thread to thread under the lock, used by one at a time.
        let process: ChildProcess
        let executable: String
        let command: SpeechCommand
        /// When it started (`SystemClock.monotonic`).
        let since: Double
    }
    private let waiting = Mutex<Waiting?>(nil)
    private let clock: @Sendable () -> Double

    /// How long one waits unused before it is ended.
    public static let idleSeconds = 60.0

    public init(clock: @escaping @Sendable () -> Double) {
        self.clock = clock
    }

    /// Seconds until the waiting one is due to end; nil when none waits.
    public func secondsLeft(now: Double) -> Double? {
        waiting.withLock { $0.map { max(0, $0.since + Self.idleSeconds - now) } }
    }

    /// Ends the waiting one when it has waited `idleSeconds`.
    public func expire(now: Double) {
        let expired = waiting.withLock { state -> Waiting? in
            guard let found = state, now - found.since >= Self.idleSeconds else { return nil }
            state = nil
            return found
        }
        _ = expired  // dropped outside the lock: killed and reaped
    }

    /// The waiting engine when it runs `executable` as `command` and is still alive.
    func take(executable: String, command: SpeechCommand) -> ChildProcess? {
        guard
            let waiting = waiting.withLock({ state -> Waiting? in
                guard let found = state, found.executable == executable, found.command == command else { return nil }
                state = nil
                return found
            })
        else { return nil }
        return waiting.process.isRunning ? waiting.process : nil
    }

    /// Starts one for `command` unless one waits for it already.
    func prepare(executable: String, command: SpeechCommand) {
        guard command.output != .wholeWAV,
            waiting.withLock({ $0.map { $0.executable != executable || $0.command != command } ?? true })
        else { return }
        guard let process = try? ChildProcess.standby(executable: executable, arguments: command.arguments) else {
            return
        }
        let replaced = waiting.withLock { state -> Waiting? in
            defer { state = Waiting(process: process, executable: executable, command: command, since: clock()) }
            return state
        }
        _ = replaced  // dropped here, outside the lock: killed and reaped
    }

    /// Kills the waiting engine (the daemon stops).
    public func close() {
        let waiting = waiting.withLock { state -> Waiting? in
            defer { state = nil }
            return state
        }
        _ = waiting
    }
}
