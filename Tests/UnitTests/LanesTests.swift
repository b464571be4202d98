import Testing

@testable import AnnounceModel

private func item(
    _ id: ItemID, _ priority: Priority = .normal, session: AudioSession = AudioSession(category: .playback),
    delay: Double? = nil
) -> QueueItem {
    QueueItem(
        id: id, clip: Clip(path: "/sounds/\(id).wav"), priority: priority, arrival: 0, eligibleAt: delay,
        session: session)
}

/// Both lanes behind one interface: which lane an id is on, its item, and what plays.
@Suite struct LanesTests {
    /// The main lane plays `a` and queues `b` (lower) and `c` (in 60 s); the mixed lane holds `m`
    /// (playing) and `w` (waiting).
    private func lanes() -> Lanes {
        var lanes = Lanes()
        _ = lanes.main.enqueue(item("a", .high), now: 0)
        _ = lanes.main.enqueue(item("b", .low), now: 0)
        _ = lanes.main.enqueue(item("c", delay: 60), now: 0)
        let ambient = AudioSession(category: .ambient)
        lanes.mixed.add(item("m", session: ambient), alert: false)
        lanes.mixed.add(item("w", session: ambient), alert: false)
        _ = lanes.mixed.play("m")
        return lanes
    }

    @Test func eachIdIsOnOneLaneOrNone() {
        let lanes = lanes()
        #expect(["a", "b", "c", "m", "w", "x"].map(lanes.isMixed) == [false, false, false, true, true, false])
        #expect(lanes.split(["a", "m", "x", "w"]) == (mixed: ["m", "w"], rest: ["a", "x"]))
    }

    @Test func playingIsTheMainLanesOneAndEveryMixedStream() {
        let lanes = lanes()
        #expect(lanes.main.playing?.id == "a")
        #expect(["a", "b", "c", "m", "w"].map { lanes.playing($0)?.id } == ["a", nil, nil, "m", "w"])
        #expect(["a", "b", "c", "m", "w", "x"].map { lanes.item($0)?.id } == ["a", "b", "c", "m", "w", nil])
        #expect(lanes.onEngines.map(\.id) == ["a", "m"], "a waiting stream is not on the engines")
    }
}
