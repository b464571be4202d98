import AnnounceModel
import AnnounceSystem
import Synchronization

/// The engine driver's reports on their way to the control thread, which polls `wakeup`.
final class Mailbox: Sendable {
    let wakeup: EventFD
    private let reports = Mutex<[EngineReport]>([])

    init() throws(AnnounceError) { wakeup = try EventFD() }

    func post(_ report: EngineReport) {
        reports.withLock { $0.append(report) }
        wakeup.signal()
    }

    func take() -> [EngineReport] {
        wakeup.drain()
        return reports.withLock { reports in
            defer { reports.removeAll() }
            return reports
        }
    }
}
