import AnnounceModel

/// Live streams (`play --stream`, DESIGN §4): their titles, and what a restart does to them.
extension QueueController {
    /// Why a live stream restored from the spool ends instead of playing on.
    static let notPersisted = "a live stream is not resumed after the daemon restarts (--persist resumes it)"

    /// A live stream's title changed: kept for `status`, and told to listeners and waiting clients.
    func streamTitleChanged(_ id: ItemID, title: String?, now: Double) {
        guard lifecycles[id] != nil, let item = item(id), meter.setTitle(title, of: id) else { return }
        logger.info("\(id) \(item.clip.path): \(title.map { "now \($0)" } ?? "no title now")")
        hub.emit(Event(time: now, .title(EventItem(item), title: title)))
    }

    /// The restored items but live streams that did not ask for `--persist`: those end
    /// `cancelled` now, their outcome kept for a client that comes back for it. The stream went
    /// on without them; a restart should not start the radio again by surprise.
    func endUnpersistedStreams(_ items: [QueueItem], now: Double) -> [QueueItem] {
        items.filter { item in
            guard let stream = item.clip.stream, stream.persist != true else { return true }
            let outcome = Outcome(.cancelled, reason: Self.notPersisted)
            let event = Event(
                time: now, .finished(EventItem(item), outcome: outcome, reason: EventReason(Self.notPersisted)))
            do throws(AnnounceError) { try spool.finish(item, event: event) } catch {
                logger.error("\(error.description)")
            }
            logger.info("\(item.id) \(item.clip.path): cancelled (\(Self.notPersisted))")
            return false
        }
    }
}
