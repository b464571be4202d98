import CPosix
import Foundation
import Logging
import Testing

@testable import AnnounceDaemon
@testable import AnnounceModel
@testable import AnnounceSystem

/// The system queue's pure rules (DESIGN §8): what a caller may ask, what others see of it,
/// whose tags a request touches, which daemon a client picks, and which descriptors a request
/// line takes.
@Suite struct SystemQueueRulesTests {
    static let member = Caller(uid: 1001, name: "alice", isTrusted: false, mayEnqueue: true, mayControl: false)
    static let root = Caller(uid: 0, name: "root", isTrusted: true, mayEnqueue: true, mayControl: true)
    static let daemon = Caller(
        uid: 999, name: "announce", isTrusted: true, isSelf: true, mayEnqueue: true, mayControl: true)

    static func item(_ configure: (inout Clip) -> Void = { _ in }) -> ItemRequest {
        var clip = Clip(path: "/home/alice/a.wav")
        configure(&clip)
        return ItemRequest(clip: clip)
    }

    @Test func aFileReachesItOnlyAsADescriptor() {
        let allowed: [DeviceName] = ["default"]
        #expect(
            Self.item().systemRefusal(for: Self.member, allowedDevices: allowed)?.contains("opens no caller's path")
                == true)
        #expect(
            Self.item().systemRefusal(for: Self.root, allowedDevices: allowed)?.contains("opens no caller's path")
                == true)
        #expect(
            Self.item { $0.handed = HandedFiles(audio: 0) }.systemRefusal(for: Self.member, allowedDevices: allowed)
                == nil)
        // A media name is the daemon's own bridge's alone.
        #expect(
            Self.item { $0.media = "ab" }.systemRefusal(for: Self.member, allowedDevices: allowed)?.contains("media")
                == true)
        #expect(Self.item { $0.media = "ab" }.systemRefusal(for: Self.daemon, allowedDevices: allowed) == nil)
        // A chime's path likewise.
        let chimed = Self.item {
            $0.handed = HandedFiles(audio: 0)
            $0.chime = "/etc/shadow"
        }
        #expect(
            chimed.systemRefusal(for: Self.member, allowedDevices: allowed)?.contains("clip.chime /etc/shadow") == true)
        #expect(
            Self.item {
                $0.handed = HandedFiles(audio: 0, chime: 1)
                $0.chime = "/x.wav"
            }
            .systemRefusal(for: Self.member, allowedDevices: allowed) == nil)
    }

    @Test func urlsVoicesAndDevicesAreLimitedForUsers() {
        let allowed: [DeviceName] = ["default", "plughw:1"]
        func url(_ text: String) -> ItemRequest {
            Self.item {
                $0.url = text
                $0.path = text
            }
        }
        #expect(
            url("file:///etc/shadow").systemRefusal(for: Self.member, allowedDevices: allowed)?.contains(
                "file:// URLs are root's") == true)
        #expect(url("file:///srv/a.wav").systemRefusal(for: Self.root, allowedDevices: allowed) == nil)
        #expect(url("https://example.org/a.mp3").systemRefusal(for: Self.member, allowedDevices: allowed) == nil)
        let spoken = Self.item { $0.speech = Speech(text: "hi", engine: .piper, voice: "/home/alice/model.onnx") }
        #expect(spoken.systemRefusal(for: Self.member, allowedDevices: allowed)?.contains("voice") == true)
        func device(_ name: DeviceName?, extra: [DeviceName]? = nil) -> ItemRequest {
            Self.item {
                $0.handed = HandedFiles(audio: 0)
                $0.device = name
                $0.extraDevices = extra
            }
        }
        #expect(device(nil).systemRefusal(for: Self.member, allowedDevices: allowed) == nil)
        #expect(device("plughw:1").systemRefusal(for: Self.member, allowedDevices: allowed) == nil)
        for crafted: DeviceName in [
            "file:FILE=/home/bob/x,FORMAT=raw", "plug:'file:FILE=/tmp/x'", "|cat", "plughw:1 ", "PLUGHW:1"
        ] {
            #expect(
                device(crafted).systemRefusal(for: Self.member, allowedDevices: allowed)?.contains("is not one")
                    == true, "\(crafted)")
        }
        #expect(
            device("default", extra: ["file:FILE=/tmp/x"]).systemRefusal(for: Self.member, allowedDevices: allowed)
                != nil)
        #expect(device("file:FILE=/tmp/x").systemRefusal(for: Self.root, allowedDevices: allowed) == nil)
    }

    @Test func controlsAreForRootAndTheControlGroup() {
        #expect(
            Self.member.controlRefusal(.pause, controlGroup: nil) == "pause is for root on the system queue, not alice")
        #expect(
            Self.member.controlRefusal(.clear, controlGroup: "wheel")
                == "clear is for root and group 'wheel' on the system queue, not alice")
        #expect(Self.root.controlRefusal(.stop, controlGroup: nil) == nil)
    }

    @Test func othersSeeOwnerIdPriorityAndStateOnly() {
        let bob = ItemOwner(uid: 1002, name: "bob")
        var theirs = ItemStatus(
            id: "b1", state: .queued, path: "/home/bob/secret.wav", priority: .high, tag: "t", device: "plughw:1")
        theirs.owner = bob
        theirs.title = "Radio"
        var mine = ItemStatus(id: "a1", state: .playing, path: "/home/alice/a.wav", priority: .normal, tag: "mine")
        mine.owner = ItemOwner(uid: 1001, name: "alice")
        let status = DaemonStatus(
            pid: 1, device: "default", deviceOpen: true, paused: false, playing: mine, queued: [theirs], scheduled: [])
        let seen = status.view(for: Self.member)
        #expect(seen.playing == mine)
        #expect(
            seen.queued[0].path == "(another user's)" && seen.queued[0].tag == nil && seen.queued[0].device == nil
                && seen.queued[0].title == nil)
        #expect(
            seen.queued[0].owner == bob && seen.queued[0].id == "b1" && seen.queued[0].priority == .high
                && seen.queued[0].state == .queued)
        #expect(status.view(for: Self.root) == status)
        #expect(status.view(for: nil) == status)

        let finished = Event(
            time: 1,
            .finished(
                EventItem("b1", path: "/home/bob/secret.wav", priority: .high),
                outcome: Outcome(.failed, reason: "/home/bob/secret.wav: no such file", code: 66),
                reason: .other("cancelled by /home/bob/x"), device: "plughw:1", format: "s16", warning: "truncated")
        ).owned(by: bob)
        let view = finished.privateView()
        #expect(
            view.path == "(another user's)" && view.reason == nil && view.device == nil && view.format == nil
                && view.warning == nil)
        #expect(view.outcome == Outcome(.failed, reason: "failed", code: 66) && view.owner == bob && view.id == "b1")
    }

    @Test func aTagIsItsOwners() {
        var scheduler = Scheduler()
        func item(_ id: ItemID, uid: UInt32?) -> QueueItem {
            var item = QueueItem(id: id, clip: Clip(path: "/a.wav"), tag: "build", arrival: 0)
            item.owner = uid.map { ItemOwner(uid: $0, name: "u\($0)") }
            return item
        }
        _ = scheduler.pause(now: 0)
        _ = scheduler.enqueue(item("a", uid: 1001), now: 0)
        _ = scheduler.enqueue(item("b", uid: 1002), now: 0)
        let replaced = scheduler.enqueue(item("c", uid: 1002), replace: true, now: 0)
        #expect(replaced.contains { if case .finish(let old, _) = $0 { old.id == "b" } else { false } })
        #expect(!replaced.contains { if case .finish(let old, _) = $0 { old.id == "a" } else { false } })
        let cancelled = scheduler.cancel(tag: "build", owner: 1001, now: 0)
        #expect(
            cancelled.count == 1
                && cancelled.contains { if case .finish(let old, _) = $0 { old.id == "a" } else { false } })
        #expect(scheduler.ready.map(\.id) == ["c"])
    }

    @Test func whichDaemonAClientUses() throws {
        func target(_ variables: [String: String], socket: Bool = true) throws -> DaemonTarget {
            try RuntimeDirectory.clientTarget(environment: { variables[$0] }, socketExists: { _ in socket })
        }
        #expect(try target(["ANNOUNCE_SYSTEM": "1", "ANNOUNCE_SYSTEM_DIR": "/tmp/q"]) == .system("/tmp/q"))
        #expect(try target(["ANNOUNCE_SYSTEM": "1"], socket: false) == .system("/run/announce"))
        #expect(try target(["ANNOUNCE_SYSTEM": "0"]) == .user)
        #expect(try target(["ANNOUNCE_RUNTIME_DIR": "/tmp/mine"]) == .user)
        #expect(throws: AnnounceError.usage("ANNOUNCE_SYSTEM must be 1 (the system queue) or 0 (your own), not 'yes'"))
        { try target(["ANNOUNCE_SYSTEM": "yes"]) }
        #expect(throws: AnnounceError.usage("ANNOUNCE_SYSTEM_DIR must be an absolute path, not 'q'")) {
            try target(["ANNOUNCE_SYSTEM_DIR": "q"])
        }
        // The tests run as root, or as a user with no /run/user/UID in CI: the socket decides.
        if getuid() == 0 || !RuntimeDirectory.isOwnDirectory("/run/user/\(getuid())") {
            #expect(try target([:]) == .system("/run/announce"))
            #expect(try target([:], socket: false) == .user)
        }
    }

    @Test func theSystemSectionOfTheConfig() {
        let (configuration, warnings) = UserConfiguration.parse(
            """
            [system]
            max-items-per-user = 5
            max-bytes-per-user = 64M
            devices = default, plughw:1
            control-group = wheel
            max-items-per-user = 0
            """, name: "c")
        #expect(configuration.system.maxItemsPerUser == 5 && configuration.system.maxBytesPerUser == 64 << 20)
        #expect(configuration.system.devices == ["default", "plughw:1"] && configuration.system.controlGroup == "wheel")
        #expect(warnings == ["c:6: max-items-per-user must be a number of items from 1 to 100000, not '0'"])
    }

    /// Descriptors sent with a line's bytes belong to that line, however the bytes arrive.
    @Test func aLineTakesTheDescriptorsThatCameWithIt() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let connection = Connection(fd: fds[0])
        defer { close(fds[1]) }
        let files = (0..<3).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { for fd in files { close(fd) } }
        func send(_ text: String, _ descriptors: [Int32] = []) {
            let bytes = Array(text.utf8)
            let sent = bytes.withUnsafeBytes { buffer in
                descriptors.withUnsafeBufferPointer {
                    announce_send_descriptors(fds[1], buffer.baseAddress, buffer.count, $0.baseAddress, Int32($0.count))
                }
            }
            #expect(sent == bytes.count)
        }
        send("{\"a\":1}\n", [files[0]])
        send("{\"b\":2}\n{\"c\"")
        send(":3}\n", [files[1], files[2]])
        send("{\"d\"", [files[0]])  // the next line's, not yet complete
        let (lines, oversized) = connection.readLines()
        #expect(!oversized)
        #expect(lines.map { String(decoding: $0.bytes, as: UTF8.self) } == ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"])
        #expect(lines.map(\.descriptors.count) == [1, 0, 2])
        var first = stat()
        var null = stat()
        #expect(
            fstat(lines[0].descriptors[0], &first) == 0 && stat("/dev/null", &null) == 0
                && first.st_rdev == null.st_rdev)
        for line in lines { for fd in line.descriptors { close(fd) } }
        send(":4}\n")
        let (later, _) = connection.readLines()
        #expect(later.count == 1 && later[0].descriptors.count == 1)
        for fd in later[0].descriptors { close(fd) }
    }
}

/// What each client of the system queue hears of an event: the hub gives others' items'
/// events without their path, device or words, and each item's owner as it was accepted.
@Suite struct SystemQueueEventTests {
    final class Peer {
        let connection: Connection
        private let fd: Int32

        init(caller: Caller?) {
            var fds: [Int32] = [0, 0]
            _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
            _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
            _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
            connection = Connection(fd: fds[0], caller: caller)
            fd = fds[1]
        }

        deinit { close(fd) }

        /// The events received, as JSON objects (Foundation's parser).
        func received() -> [[String: Any]] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while case let got = read(fd, &chunk, chunk.count), got > 0 { bytes += chunk[0..<got] }
            return bytes.split(separator: UInt8(ascii: "\n")).compactMap {
                try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]
            }
        }
    }

    @Test func aSubscriberSeesOthersItemsPrivatelyAndItsOwnWhole() {
        let hub = EventHub()
        let member = Peer(caller: SystemQueueRulesTests.member)
        let root = Peer(caller: SystemQueueRulesTests.root)
        let own = Peer(caller: nil)
        for peer in [member, root, own] {
            peer.connection.subscribed = true
            hub.add(peer.connection)
        }
        hub.owners["r1"] = ItemOwner(uid: 0, name: "root")
        hub.owners["a1"] = ItemOwner(uid: 1001, name: "alice")
        hub.emit(Event(time: 1, .queued(EventItem("r1", path: "/root/secret.wav", priority: .high))))
        hub.emit(
            Event(
                time: 2,
                .started(
                    EventItem("a1", path: "/home/alice/a.wav", priority: .normal), device: "default", format: "s16")))
        hub.emit(
            Event(
                time: 3,
                .finished(
                    EventItem("r1", path: "/root/secret.wav", priority: .high),
                    outcome: Outcome(.cancelled, reason: "cancelled by /root/x"), device: "default")))
        let seen = member.received()
        #expect(seen.map { $0["path"] as? String } == ["(another user's)", "/home/alice/a.wav", "(another user's)"])
        #expect(seen.map { ($0["owner"] as? [String: Any])?["name"] as? String } == ["root", "alice", "root"])
        #expect(seen[2]["device"] == nil && (seen[2]["outcome"] as? [String: Any])?["reason"] as? String == "cancelled")
        #expect(seen[1]["device"] as? String == "default")
        #expect(
            root.received().map { $0["path"] as? String } == [
                "/root/secret.wav", "/home/alice/a.wav", "/root/secret.wav"
            ])
        #expect(own.received().count == 3)
        // Forgotten with its finished event.
        #expect(hub.owners["r1"] == nil && hub.owners["a1"] != nil)
    }
}

/// Who the listener is: `[system] listener`, else logind's active user of seat0, asked anew
/// as each item starts (so switching users moves the output at the next item).
@Suite struct ListenerChoiceTests {
    @Test func theActiveUserOfSeat0() throws {
        #expect(
            ListenerRoute.activeUID(
                Array(
                    "# This is private data. Do not parse.\nACTIVE=c2\nACTIVE_UID=1000\nSESSIONS=c2 c1\nUIDS=1000 1001\n"
                        .utf8)) == 1000)
        #expect(ListenerRoute.activeUID(Array("SESSIONS=\nUIDS=\n".utf8)) == nil)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seat-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let seat = directory + "/seat0"
        try "ACTIVE_UID=1001\n".write(toFile: seat, atomically: true, encoding: .utf8)
        let route = try ListenerRoute(
            path: directory + "/listener", listener: nil, device: "default", seat: seat,
            logger: Logger(label: "test")
        ) { _ in }
        defer { route.stopAll() }
        #expect(route.listenerUID == 1001)
        try "ACTIVE_UID=1002\n".write(toFile: seat, atomically: true, encoding: .utf8)
        #expect(route.listenerUID == 1002)
        let named = try ListenerRoute(
            path: directory + "/listener2", listener: "root", device: "default", seat: seat,
            logger: Logger(label: "test")
        ) { _ in }
        defer { named.stopAll() }
        #expect(named.listenerUID == 0)
    }
}
