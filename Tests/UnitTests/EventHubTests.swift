import Foundation
import Testing

@testable import AnnounceDaemon
@testable import AnnounceModel

/// Who gets which event: on socket pairs, the client's end read back as lines.
@Suite struct EventHubTests {
    /// A connection the hub sends on, and the client's end of it.
    final class Client {
        let connection: Connection
        private let peer: Int32

        init() {
            var fds: [Int32] = [0, 0]
            _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
            _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
            _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
            connection = Connection(fd: fds[0])
            peer = fds[1]
        }

        deinit { close(peer) }

        /// The event kinds (and ids) received so far.
        func received() -> [String] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while case let got = read(peer, &chunk, chunk.count), got > 0 { bytes += chunk[0..<got] }
            return bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
                guard let event = try? JSONDecoder().decode(Event.self, from: Data(line)) else {
                    Issue.record("not an event: \(String(decoding: line, as: UTF8.self))")
                    return nil
                }
                return "\(event.event.rawValue)" + (event.id.map { " \($0)" } ?? "")
                    + (event.percent.map { " \($0)%" } ?? "")
            }
        }
    }

    @Test func subscribersGetEverythingAndWaitersTheirItemsButItsQueuedEvent() {
        let hub = EventHub()
        let subscriber = Client()
        let waiter = Client()
        let other = Client()
        subscriber.connection.subscribed = true
        waiter.connection.waiting = ["a"]
        for client in [subscriber, waiter, other] { hub.add(client.connection) }
        hub.emit(Event(time: 0, .queued(EventItem("a"))))
        hub.emit(Event(time: 0, .started(EventItem("a"))))
        hub.emit(Event(time: 0, .started(EventItem("b"))))
        hub.emit(Event(time: 0, .finished(EventItem("a"), outcome: Outcome(.played))))
        hub.emit(Event(time: 0, .started(EventItem("a"))))
        #expect(subscriber.received() == ["queued a", "started a", "started b", "finished a", "started a"])
        #expect(waiter.received() == ["started a", "finished a"], "a finished item is no longer waited for")
        #expect(other.received() == [])
    }

    @Test func progressGoesToWatchersAndQuarterMarksToSubscribers() {
        let hub = EventHub()
        let subscriber = Client()
        let watcher = Client()
        subscriber.connection.subscribed = true
        watcher.connection.waiting = ["a"]
        watcher.connection.wantsProgress = true
        hub.add(subscriber.connection)
        hub.add(watcher.connection)
        var built = 0
        func tick(_ percent: Int?) -> Event {
            built += 1
            return Event(time: 0, .progress(EventItem("a"), percent: percent))
        }
        hub.publishProgress(of: "a", milestone: 0, tick)
        hub.publishProgress(of: "a", milestone: 25, tick)
        hub.publishProgress(of: "b", milestone: 0, tick)
        #expect(built == 3, "nothing is built when no one listens; a quarter mark once more")
        #expect(watcher.received() == ["progress a", "progress a"])
        #expect(subscriber.received() == ["progress a 25%"])
        #expect(hub.isProgressWatched("a") && !hub.isProgressWatched("b"))
    }

    @Test func aFinishedEventHeldForItsDeviceGoesOutWhenItCloses() {
        let hub = EventHub()
        let waiter = Client()
        waiter.connection.waiting = ["a"]
        hub.add(waiter.connection)
        hub.emit(Event(time: 0, .finished(EventItem("a"), outcome: Outcome(.played))), whenClosed: "file:/tmp/a.wav")
        #expect(hub.isHolding && hub.heldIDs == ["a"])
        #expect(waiter.received() == [])
        hub.release("hw:0")
        #expect(waiter.received() == [], "another device")
        hub.release("file:/tmp/a.wav")
        #expect(waiter.received() == ["finished a"])
        #expect(!hub.isHolding)
    }
}
