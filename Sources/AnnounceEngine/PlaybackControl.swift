import AnnounceModel
import AnnounceSystem
import Synchronization

/// Stops one play, or moves its mixer gain (ducking), from any thread, also
/// before the play has begun or after it ended.
public final class PlaybackControl: Sendable {
    private struct State: ~Copyable {
        var stopped = false
        var job: PlaybackJob?
        /// The mixer gain the play starts at, or ramps to.
        var gain: Float = 1
        var progressInterval: Double?
    }

    private let state = Mutex(State())
    /// Fired by `stop`: what the play's source waits on for input (a speech engine) ends at once.
    public let cancellation = Cancellation()

    /// `gain`: the mixer gain the play starts at (a stream that starts ducked).
    public init(gain: Float = 1) {
        state.withLock { $0.gain = gain }
    }

    public func stop() {
        let job = state.withLock { state in
            state.stopped = true
            return state.job
        }
        job?.requestStop()
        cancellation.fire()
    }

    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Seconds of audio between progress reports (default `PlaybackEngine.progressInterval`);
    /// takes effect at once in a play in progress that reports progress.
    public var progressInterval: Double? {
        get { state.withLock { $0.progressInterval } }
        set { state.withLock { Self.setProgressInterval(newValue, in: &$0) } }
    }

    /// Shortens a set progress interval to at most `seconds` (never below the engine's own);
    /// leaves the default (nil) alone.
    public func capProgressInterval(_ seconds: Double) {
        state.withLock { state in
            guard let current = state.progressInterval else { return }
            Self.setProgressInterval(min(current, max(seconds, PlaybackEngine.progressInterval)), in: &state)
        }
    }

    private static func setProgressInterval(_ interval: Double?, in state: inout State) {
        state.progressInterval = interval
        guard let job = state.job, job.progressStepFrames.load(ordering: .relaxed) > 0 else { return }
        job.progressStepFrames.store(
            stepFrames(
                interval ?? PlaybackEngine.progressInterval,
                rate: job.device.output.format.sampleRate), ordering: .relaxed)
    }

    static func stepFrames(_ seconds: Double, rate: Int) -> Int { max(1, Int(Double(rate) * seconds)) }

    /// Ramps the play's mixer gain to `gain` over `seconds` (raised cosine); a play
    /// that has not begun starts at `gain`.
    public func setGain(_ gain: Float, overSeconds seconds: Double) {
        state.withLock { state in
            state.gain = gain
            if let job = state.job {
                job.setGain(gain, rampFrames: Int(seconds * Double(job.device.output.format.sampleRate)))
            }
        }
    }

    func attach(_ job: PlaybackJob) {
        let stopped = state.withLock { state in
            state.job = job
            job.setGain(state.gain, rampFrames: 0)  // before the job is submitted: its starting gain
            Self.setProgressInterval(state.progressInterval, in: &state)
            return state.stopped
        }
        if stopped { job.requestStop() }
    }

    /// The job of the play in progress, if any.
    var attachedJob: PlaybackJob? { state.withLock { $0.job } }

    func detach() {
        state.withLock { $0.job = nil }
    }
}
