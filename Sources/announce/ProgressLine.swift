import AnnounceClient
import AnnounceModel
import AnnounceSystem
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The one line a terminal gets while `play` waits: what plays and how far, or why it waits.
/// Only on a terminal whose foreground process group is ours (not under `&` or cron), cut to
/// the terminal's width (read at each redraw, so a resize counts from the next one), ended with
/// a newline when the item ends and on Ctrl-C. With TERM=dumb or NO_COLOR: ASCII, no escapes.
final class ProgressLine {
    private let plain: Bool
    /// Columns written on the current line; 0 when none is open.
    private var columns = 0

    private init(plain: Bool) { self.plain = plain }

    /// A display for stderr, or nil when it is not our terminal.
    static func forTerminal(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } })
        -> ProgressLine?
    {
        guard isatty(STDERR_FILENO) == 1, isForeground else { return nil }
        let plain = environment("TERM") == "dumb" || environment("NO_COLOR").map { !$0.isEmpty } == true
        return ProgressLine(plain: plain)
    }

    private static var isForeground: Bool { tcgetpgrp(STDERR_FILENO) == getpgrp() }

    /// Playing (state nil) or stopped for `state`; `heard` nil hides the position.
    func show(_ name: String, heard: Double?, duration: Double?, state: String? = nil) {
        let position =
            heard.map { "  " + TimeSpan.format($0) + (duration.map { " / " + TimeSpan.format($0) } ?? "") } ?? ""
        draw(state == nil ? glyph("▶", ">") : glyph("⏸", "||"), name, position + (state.map { "  " + $0 } ?? ""))
    }

    /// Not started yet, and why.
    func waiting(_ name: String, _ why: String) {
        draw(glyph("…", ".."), name, "  " + why)
    }

    /// The item ended: its last line stays, with how it ended unless it played (nil: unknown).
    func finish(_ name: String, heard: Double?, duration: Double?, outcome: Outcome?) {
        show(
            name, heard: heard, duration: duration,
            state: outcome?.kind == .played ? nil : outcome.map(outcomeText) ?? "ended")
        endLine()
    }

    /// Ends the line shown, if any, so what follows starts on a line of its own.
    func endLine() {
        guard columns > 0 else { return }
        writeToStderr("\n")
        columns = 0
        announce_set_terminal_line_open(0)
    }

    private func glyph(_ fancy: String, _ ascii: String) -> String { plain ? ascii : fancy }

    /// `mark name state`, cut to the width: the name is shortened first (with an ellipsis), so
    /// the state and times stay; they are cut only when even they do not fit.
    private func draw(_ mark: String, _ name: String, _ state: String) {
        guard Self.isForeground else { return }  // put in the background meanwhile
        var size = winsize()
        let width = ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        // One column short of the edge: a full last column wraps on some terminals.
        let room = max(1, width - 1)
        var text = mark + " " + name + state
        if text.count > room {
            let ellipsis = glyph("…", "...")
            let nameRoom = room - mark.count - 1 - state.count - ellipsis.count
            text =
                nameRoom > 0
                ? mark + " " + name.prefix(nameRoom) + ellipsis + state
                : mark + " " + state.drop { $0 == " " }
        }
        var line = String(text.prefix(room))
        if plain {
            line = String(line.unicodeScalars.map { $0.isASCII && $0.value >= 32 ? Character($0) : "?" })
            let shown = line.count
            writeToStderr(
                "\r" + line + String(repeating: " ", count: max(0, min(columns, width - 1) - shown)) + "\r" + line)
            columns = shown
        } else {
            writeToStderr("\r\u{1B}[K" + line)
            columns = line.count
        }
        announce_set_terminal_line_open(1)
    }
}

/// Feeds a `play`'s events to its line: the line follows the first item not finished; an
/// item's last waiting reason is shown when the line gets to it.
final class ProgressFollower {
    private let line: ProgressLine
    private let ids: [ItemID]
    private let names: [String]
    private var finished: Set<ItemID> = []
    private var heard: [ItemID: (heard: Double?, duration: Double?)] = [:]
    private var waits: [ItemID: Event] = [:]
    /// Live streams' titles, shown after their names.
    private var titles: [ItemID: String] = [:]

    init(_ line: ProgressLine, ids: [ItemID], names: [String]) {
        self.line = line
        self.ids = ids
        self.names = names
    }

    func handle(_ event: Event) {
        guard let id = event.id, let index = ids.firstIndex(of: id) else { return }
        if event.event == .waiting { waits[id] = event }
        if event.event == .title { titles[id] = event.title }
        if event.event == .progress || event.event == .started { heard[id] = (event.heard ?? 0, event.duration) }
        let current = ids.first { !finished.contains($0) }
        if event.event == .finished { finished.insert(id) }
        guard current == id else { return }
        let name = titles[id].map { "\(names[index]): \($0)" } ?? names[index]
        switch event.event {
        case .progress, .started:
            line.show(name, heard: event.heard ?? 0, duration: event.duration)
        case .title where heard[id] != nil:
            line.show(name, heard: heard[id]?.heard, duration: heard[id]?.duration)
        case .interruptionBegan:
            if let at = event.heard { heard[id] = (at, event.duration ?? heard[id]?.duration) }
            stopped(name, id: id, event, state: interruptionText(event))
        case .waiting where heard[id] != nil:
            // Started already: where it stopped stays, with why it still waits (`paused by you`).
            stopped(
                name, id: id, event,
                state: event.reason == .paused ? interruptionText(event) : waitingText(event, now: SystemClock.wall()))
        case .waiting:
            line.waiting(name, waitingText(event, now: SystemClock.wall()))
        case .finished:
            line.finish(
                name, heard: event.heard ?? heard[id]?.heard, duration: event.duration ?? heard[id]?.duration,
                outcome: event.outcome)
            if let next = ids.first(where: { !finished.contains($0) }), heard[next] == nil, let wait = waits[next],
                let position = ids.firstIndex(of: next)
            {
                line.waiting(names[position], waitingText(wait, now: SystemClock.wall()))
            }
        default:
            break
        }
    }

    /// A started item that stopped: its position (none after a device loss: it is no news then).
    private func stopped(_ name: String, id: ItemID, _ event: Event, state: String) {
        let lost = event.reason == .deviceLost
        line.show(
            name, heard: lost ? nil : heard[id]?.heard, duration: event.duration ?? heard[id]?.duration, state: state)
    }
}

/// What a `waiting` event means, as the progress line says it.
func waitingText(_ event: Event, now: Double) -> String {
    switch event.reason {
    case .queued?:
        let ahead = event.ahead ?? 0
        return "waiting: \(ahead) ahead"
            + (event.wait.map { " (about \(clockText(max(0, $0 - (now - event.time)))))" } ?? "")
    case .scheduled?:
        guard let at = event.at else { return "scheduled" }
        return "scheduled \(localTimeText(at)) (in \(spanText(at - now)))"
    case .paused?: return "paused: waits for announce resume"
    case .deviceBusy?: return "device busy" + (event.warning.map { ": " + holderText($0) } ?? "")
    case .deviceLost?: return "device lost, waiting"
    case .call?: return "waiting: a call plays" + (event.warning.map { " (\($0))" } ?? "")
    case .otherAudioPlaying?: return "waiting: other audio playing" + (event.warning.map { " (\($0))" } ?? "")
    default: return "held" + (event.warning.map { ": " + $0 } ?? "")
    }
}

/// Why a play stopped (`interruption-began`'s reason), as the progress line says it.
func interruptionText(_ event: Event) -> String {
    switch event.reason {
    case .paused?: "paused by you"
    case .deviceLost?: "device lost, waiting"
    case .call?: "paused by a call" + (event.warning.map { " (\($0))" } ?? "")
    case .deviceBusy?: "device busy" + (event.warning.map { ": " + holderText($0) } ?? "")
    case .preempted?: "waits for a higher priority"
    case let reason?: reason.description
    case nil: "stopped"
    }
}

/// `busy, held by pid 1234 (firefox)` → `held by pid 1234 (firefox)`.
private func holderText(_ warning: String) -> String { BusyWarning.holders(of: warning) }

/// `0:34`, `12:05`: whole seconds.
private func clockText(_ seconds: Double) -> String {
    let whole = Int(seconds.rounded())
    return "\(whole / 60):\(whole % 60 < 10 ? "0" : "")\(whole % 60)"
}

/// `3h12m`, `5m`, `40s`.
private func spanText(_ seconds: Double) -> String {
    let whole = max(0, Int(seconds.rounded()))
    let minutes = (whole % 3600) / 60
    if whole >= 3600 { return "\(whole / 3600)h\(minutes < 10 ? "0" : "")\(minutes)m" }
    if whole >= 60 { return "\(whole / 60)m" }
    return "\(whole)s"
}
