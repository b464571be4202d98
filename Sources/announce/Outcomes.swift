import AnnounceClient
import AnnounceModel
import AnnounceSystem
import Logging

/// Prints the outcomes of `items` (in order) as `play` and `alert --wait` do and returns the exit
/// status: that of the first item that did not play (0 when all played, DESIGN §1).
///
/// A failure is printed once even when several items failed the same way (one line for a
/// device that failed every item); the other outcomes get `PATH: KIND (REASON)` unless `quiet` or
/// `shown` (the progress line ended with it already).
func reportOutcomes(
    _ outcomes: [ItemID: Event], of items: [(id: ItemID, path: String)], json: Bool, quiet: Bool,
    shown: Bool = false, logger: Logger
) -> Int32 {
    var status: Int32 = 0
    var printed: Set<String> = []
    for (id, path) in items {
        guard let event = outcomes[id], let outcome = event.outcome else { continue }
        if json { print(jsonLine(event)) }
        if let frames = event.frames, let format = event.format, let device = event.device {
            logger.debug("\(path): \(frames) frames as \(format) on \(device)")
        }
        if let warning = event.warning { logger.warning("\(path): \(warning)") }
        switch outcome.kind {
        case .played: break
        case .failed:
            let message = outcome.reason ?? "\(path): failed"
            if printed.insert(message).inserted { printError(message) }
        default: if !quiet && !shown { printError("\(path): \(outcomeText(outcome))") }
        }
        if status == 0 { status = outcome.exitCode }
    }
    return status
}

/// `cancelled (skipped)`; the kind alone when the reason only repeats it (`cancelled`).
func outcomeText(_ outcome: Outcome) -> String {
    outcome.kind.rawValue + (outcome.reason.map { $0 == outcome.kind.rawValue ? "" : " (\($0))" } ?? "")
}
