/// What the daemon must do, in order, after a scheduler call.
public enum SchedulerEffect: Equatable, Sendable {
    /// Start playing this item from `item.heardFrames` (fading in when resuming mid-clip).
    case play(QueueItem)
    /// Stop the current item; `playbackEnded` follows.
    case stopPlayback(id: ItemID, reason: StopReason)
    /// Write the item to the spool (accepted, or its resume point changed).
    case persist(QueueItem)
    /// The item was interrupted and goes back to the queue.
    case interrupted(QueueItem, reason: StopReason)
    /// Final: remove it from the spool and tell whoever waits.
    case finish(QueueItem, Outcome)
}

extension SchedulerEffect {
    /// `effects` with each `.play` moved ahead of the `.persist` effects of other items just
    /// before it (with only `.interrupted` effects between): a preempting item starts while the
    /// preempted one's resume point is written, not after. Nothing else changes order, and a
    /// write never moves past an effect that could end its item (`.finish`, `.stopPlayback`).
    public static func playsFirst(_ effects: [SchedulerEffect]) -> [SchedulerEffect] {
        var out: [SchedulerEffect] = []
        var held: [SchedulerEffect] = []  // persists and interruptions, until what follows is known
        for effect in effects {
            switch effect {
            case .persist, .interrupted:
                held.append(effect)
            case .play(let item):
                let writesOthers = { (held: SchedulerEffect) in
                    if case .persist(let written) = held { written.id != item.id } else { false }
                }
                out += held.filter { !writesOthers($0) } + [effect] + held.filter(writesOthers)
                held = []
            case .stopPlayback, .finish:
                out += held + [effect]
                held = []
            }
        }
        return out + held
    }
}
