extension QueueItem {
    /// The item a checked `ItemRequest` (`Request.problem`) becomes when it is accepted: the
    /// request's defaults applied, `--delay` counted from `now`, and an eligibility time that
    /// has already passed dropped (it is ready at once). The scheduler gives it its sequence.
    public init(request: ItemRequest, id: ItemID, now: Double) {
        let eligibleAt = request.at ?? request.delay.map { now + $0 }
        self.init(
            id: id, clip: request.clip, priority: request.priority ?? .default,
            interrupts: request.interrupts ?? QueueItem.defaultInterrupts, onInterrupt: request.onInterrupt ?? .default,
            dropAfter: request.dropAfter ?? QueueItem.defaultDropAfter, tag: request.tag, arrival: now,
            eligibleAt: eligibleAt.flatMap { $0 > now ? $0 : nil }, expireAfter: request.expire,
            session: request.session, duckLevel: request.duckLevel, ifBusy: request.ifBusy,
            ifOtherAudio: request.ifOtherAudio)
    }
}
