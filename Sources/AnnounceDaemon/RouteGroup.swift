import AnnounceEngine
import AnnounceModel
import Synchronization

/// The plays of one item on several devices (multi-route), reported as one: ended when
/// the last ends, with the least heard and the first failure.
final class RouteGroup: @unchecked Sendable {
    private struct State {
        var left: Int
        var ended: EngineReport?
    }
    private let state: Mutex<State>
    private let post: @Sendable (EngineReport) -> Void

    init(count: Int, post: @escaping @Sendable (EngineReport) -> Void) {
        state = Mutex(State(left: count))
        self.post = post
    }

    /// Every device's start is reported (each device is open now); the daemon announces the item once.
    func started(_ report: EngineReport) {
        post(report)
    }

    func ended(_ report: EngineReport) {
        let last = state.withLock { state -> EngineReport? in
            state.left -= 1
            state.ended = state.ended.map { Self.merge($0, report) } ?? report
            return state.left == 0 ? state.ended : nil
        }
        if let last { post(last) }
    }

    private static func merge(_ a: EngineReport, _ b: EngineReport) -> EngineReport {
        guard case .ended(let id, let heardA, let totalA, let rateA, let endA, let detailsA) = a,
            case .ended(_, let heardB, let totalB, let rateB, let endB, let detailsB) = b
        else { return a }
        var details = detailsA
        details.devices = DeviceList(detailsA.devices.names + detailsB.devices.names)
        details.frames = min(detailsA.frames, detailsB.frames)
        details.warning = [detailsA.warning, detailsB.warning].compactMap { $0 }.joined(separator: "; ").nilIfEmpty
        details.deviceTrouble = detailsA.deviceTrouble ?? detailsB.deviceTrouble
        let end: PlaybackEnd =
            if case .failed = endA { endA } else if case .failed = endB {
                endB
            } else if endA == .stopped || endB == .stopped { .stopped } else { endA }
        return .ended(
            id: id, heardFrames: min(heardA, heardB), totalFrames: totalA ?? totalB, sampleRate: rateA ?? rateB,
            end: end, details: details)
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
