import FoundationEssentials
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A fake filesystem root with /proc/asound and /proc/PID trees, made per test
/// in a temporary directory and removed after.
private final class FixtureRoot {
    let path: String
    let me = getpid()

    init() {
        var template = Array("/tmp/announce-holders-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit { Self.remove(path) }

    func directory(_ relative: String) {
        var current = path
        for part in relative.split(separator: "/") {
            current += "/" + part
            mkdir(current, 0o755)
        }
    }

    func file(_ relative: String, _ bytes: [UInt8]) {
        directory(String(relative.split(separator: "/").dropLast().joined(separator: "/")))
        let fd = open(path + "/" + relative, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(fd >= 0, "cannot create \(relative)")
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    func file(_ relative: String, _ text: String) { file(relative, Array(text.utf8)) }

    func link(_ relative: String, to target: String) {
        directory(String(relative.split(separator: "/").dropLast().joined(separator: "/")))
        precondition(symlink(target, path + "/" + relative) == 0, "cannot link \(relative)")
    }

    func status(card: Int, device: Int, sub: Int, _ text: String) {
        file("proc/asound/card\(card)/pcm\(device)p/sub\(sub)/status", text)
    }

    private static func remove(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            chmod(path, 0o755)
            for name in directoryEntries(path) { remove(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

/// cmdline bytes: arguments each ended by NUL, as the kernel writes them.
private func argv(_ arguments: String...) -> [UInt8] {
    arguments.flatMap { Array($0.utf8) + [0] }
}

/// Two cards plus an HDMI card, with open, closed, foreign and unreadable
/// entries; see each line for what it exercises.
private func systemFixture() -> FixtureRoot {
    let root = FixtureRoot()
    let me = root.me
    func running(_ owner: Int32) -> String {
        "state: RUNNING\nowner_pid   : \(owner)\ntrigger_time: 1234.5\ntstamp      : 0.0\ndelay       : 1024\n"
    }

    // Card 0 "PCH": device 0 sub 0 open by mpv (also seen through its fd: one entry),
    // sub 1 closed; device 3 has only closed substreams (aplay is found by its fd);
    // a capture substream open by someone else is not playback.
    root.file("proc/asound/card0/id", "PCH\n")
    root.link("proc/asound/PCH", to: "card0")
    root.file("proc/asound/cards", " 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n")
    root.file("proc/asound/card0/pcm0p/info", "card: 0\ndevice: 0\n")
    root.status(card: 0, device: 0, sub: 0, running(4242))
    root.status(card: 0, device: 0, sub: 1, "closed\n")
    root.status(card: 0, device: 3, sub: 0, "closed\n")
    root.file("proc/asound/card0/pcm0c/sub0/status", running(5555))

    // Card 1 "USB": device 0 sub 0 opened by a thread (6001) of pulseaudio (600);
    // device 1 by ourselves and by one of our threads; device 2 by a pid whose
    // /proc entry is gone or hidden; device 3 by pid 0 (another pid namespace).
    root.file("proc/asound/card1/id", "USB\n")
    root.status(card: 1, device: 0, sub: 0, "state: PREPARED\nowner_pid   : 6001\n")
    root.status(card: 1, device: 1, sub: 0, running(me))
    root.status(card: 1, device: 1, sub: 1, running(88_888))
    root.status(card: 1, device: 2, sub: 0, running(9999))
    root.status(card: 1, device: 3, sub: 0, running(0))

    // Card 2 "HDMI": a status that cannot be read as a file.
    root.file("proc/asound/card2/id", "HDMI\n")
    root.directory("proc/asound/card2/pcm0p/sub0/status")

    // Processes.
    root.file("proc/4242/comm", "mpv\n")
    root.file("proc/4242/cmdline", argv("/usr/bin/mpv", "--no-video", "song.mp3"))
    root.link("proc/4242/fd/0", to: "/dev/pts/1")
    root.link("proc/4242/fd/5", to: "/dev/snd/pcmC0D0p")
    root.link("proc/4242/fd/6", to: "/dev/snd/controlC0")

    root.file("proc/600/comm", "pulseaudio\n")
    root.file("proc/600/cmdline", argv("/usr/bin/pulseaudio", "--daemonize=no"))
    root.file("proc/600/status", "Name:\tpulseaudio\nTgid:\t600\nPid:\t600\n")
    root.file("proc/6001/comm", "alsa-sink-USB\n")
    root.file("proc/6001/cmdline", argv("/usr/bin/pulseaudio", "--daemonize=no"))
    root.file("proc/6001/status", "Name:\talsa-sink-USB\nTgid:\t600\nPid:\t6001\n")

    root.file("proc/88888/status", "Name:\tannounce-play\nTgid:\t\(me)\nPid:\t88888\n")

    root.file("proc/300/comm", "aplay\n")
    root.file("proc/300/cmdline", argv("aplay", "-D", "hw:0,3", "/tmp/my file.wav"))
    root.link("proc/300/fd/3", to: "/dev/snd/pcmC0D0c")
    root.link("proc/300/fd/4", to: "/dev/snd/pcmC0D3p")
    root.link("proc/300/fd/7", to: "socket:[123]")
    root.link("proc/300/fd/8", to: "/dev/snd/pcmC0D3p")

    root.file("proc/301/comm", "kworker/u8:2\n")
    root.file("proc/301/cmdline", [])
    root.link("proc/301/fd/9", to: "/dev/snd/pcmC1D0p")

    root.file("proc/500/comm", "evil\n")
    root.file("proc/500/cmdline", argv("/opt/evil\u{1B}[2J", String(repeating: "x", count: 120)))
    root.link("proc/500/fd/3", to: "/dev/snd/pcmC1D0p")

    // Ourselves, holding card 0 device 0 too.
    root.link("proc/\(me)/fd/3", to: "/dev/snd/pcmC0D0p")
    root.link("proc/self", to: "\(me)")

    // Unreadable or useless entries.
    root.file("proc/400/comm", "notadir\n")
    root.file("proc/400/fd", "not a directory")
    root.file("proc/401/comm", "secret\n")
    root.link("proc/401/fd/3", to: "/dev/snd/pcmC2D0p")
    chmod(root.path + "/proc/401/fd", 0)
    root.file("proc/402/fd/3", "a regular file, not a link")
    root.directory("proc/7777")
    root.link("proc/7778/fd/1", to: "/dev/snd/pcmCxD0p")
    root.link("proc/7779/fd/1", to: "/dev/snd/pcmC1D0p (deleted)")
    root.file("proc/uptime", "1.0 2.0\n")
    return root
}

/// Whether a mode-000 directory can still be read (root can: CAP_DAC_OVERRIDE).
private func unreadableDirectoriesAreReadable(_ root: FixtureRoot) -> Bool {
    guard let handle = opendir(root.path + "/proc/401/fd") else { return false }
    closedir(handle)
    return true
}

private let mpv = DeviceHolder(
    card: 0, device: 0, subdevice: 0, cardID: "PCH", pid: 4242, command: "mpv --no-video song.mp3")
private let aplay = DeviceHolder(
    card: 0, device: 3, subdevice: nil, cardID: "PCH", pid: 300,
    command: "aplay -D hw:0,3 '/tmp/my file.wav'")
private let kworker = DeviceHolder(card: 1, device: 0, subdevice: nil, cardID: "USB", pid: 301, command: "kworker/u8:2")
private let evil = DeviceHolder(
    card: 1, device: 0, subdevice: nil, cardID: "USB", pid: 500,
    command: "evil?[2J " + String(repeating: "x", count: 70) + "…")
private let pulseaudio = DeviceHolder(
    card: 1, device: 0, subdevice: 0, cardID: "USB", pid: 600, command: "pulseaudio --daemonize=no")
private let hidden = DeviceHolder(card: 1, device: 2, subdevice: 0, cardID: "USB", pid: 9999, command: "")
private let secret = DeviceHolder(card: 2, device: 0, subdevice: nil, cardID: "HDMI", pid: 401, command: "secret")

@Suite struct DeviceHoldersTests {
    @Test func findsHoldersFromStatusAndDescriptors() {
        let root = systemFixture()
        var expected = [mpv, aplay, kworker, evil, pulseaudio, hidden]
        if unreadableDirectoriesAreReadable(root) { expected.append(secret) }
        #expect(DeviceHolders.find(root: root.path) == expected)
    }

    @Test func excludingAnotherPid() {
        let root = systemFixture()
        let found = DeviceHolders.find(root: root.path, excluding: 4242)
        #expect(!found.contains { $0.pid == 4242 })
        // Our own pid is no longer excluded: its fd link, and its status entries
        // (one by itself, one by its thread 88888) as one per device.
        #expect(
            found.filter { $0.pid == root.me } == [
                DeviceHolder(card: 0, device: 0, subdevice: nil, cardID: "PCH", pid: root.me, command: ""),
                DeviceHolder(card: 1, device: 1, subdevice: 0, cardID: "USB", pid: root.me, command: "")
            ])
    }

    @Test func emptyAndMissingRoots() {
        let root = FixtureRoot()
        #expect(DeviceHolders.find(root: root.path).isEmpty)
        #expect(DeviceHolders.find(root: root.path + "/nowhere").isEmpty)
        root.status(card: 0, device: 0, sub: 0, "closed\n")
        root.file("proc/asound/card0/id", "PCH\n")
        #expect(DeviceHolders.find(root: root.path).isEmpty)
        #expect(DeviceHolders.busyReason(device: "hw:0", root: root.path) == "busy: another program is using it")
    }

    /// /proc/asound hidden (a container): the fd links alone still name the holder, without substream or card id.
    @Test func descriptorsAloneWithoutAsound() {
        let root = FixtureRoot()
        root.file("proc/12/cmdline", argv("/usr/bin/speaker-test", "-D", "hw:0"))
        root.link("proc/12/fd/4", to: "/dev/snd/pcmC0D0p")
        root.link("proc/13/fd/4", to: "/dev/snd/pcmC10D11p")
        #expect(
            DeviceHolders.find(root: root.path + "/") == [
                DeviceHolder(card: 0, device: 0, subdevice: nil, cardID: nil, pid: 12, command: "speaker-test -D hw:0"),
                DeviceHolder(card: 10, device: 11, subdevice: nil, cardID: nil, pid: 13, command: "")
            ])
    }

    @Test func resolvesNames() {
        let root = systemFixture()
        func target(_ name: DeviceName) -> DeviceTarget? { DeviceHolders.target(ofDevice: name, root: root.path) }
        #expect(target("hw:0") == DeviceTarget(card: 0, device: 0, subdevice: nil))
        #expect(target("hw:0,3") == DeviceTarget(card: 0, device: 3, subdevice: nil))
        #expect(target("hw:1,0,1") == DeviceTarget(card: 1, device: 0, subdevice: 1))
        #expect(target("hw:1,0,-1") == DeviceTarget(card: 1, device: 0, subdevice: nil))
        #expect(target("plughw:1,0") == DeviceTarget(card: 1, device: 0, subdevice: nil))
        #expect(target("plughw:1") == DeviceTarget(card: 1, device: 0, subdevice: nil))
        #expect(target("hw:CARD=PCH,DEV=0") == DeviceTarget(card: 0, device: 0, subdevice: nil))
        #expect(target("hw:CARD=PCH") == DeviceTarget(card: 0, device: 0, subdevice: nil))
        #expect(target("plughw:CARD=USB,DEV=2,SUBDEV=0") == DeviceTarget(card: 1, device: 2, subdevice: 0))
        #expect(target("hw:DEV=3,CARD=\"PCH\"") == DeviceTarget(card: 0, device: 3, subdevice: nil))
        #expect(target("hw:PCH,3") == DeviceTarget(card: 0, device: 3, subdevice: nil))
        #expect(target(" hw:1 ") == DeviceTarget(card: 1, device: 0, subdevice: nil))
        // Plugins on a card: the card, device unknown.
        #expect(target("sysdefault:CARD=USB") == DeviceTarget(card: 1, device: nil, subdevice: nil))
        #expect(target("front:0,0") == DeviceTarget(card: 0, device: nil, subdevice: nil))
        #expect(target("dmix:CARD=HDMI,DEV=3") == DeviceTarget(card: 2, device: nil, subdevice: nil))
        // Nothing to map.
        for name: DeviceName in [
            "default", "pulse", "null", "hw", "hw:", "hw:CARD=Nope,DEV=0", "hw:0,abc", "hw:0,-1", "file:/tmp/x.raw", ""
        ] {
            #expect(target(name) == nil, "\(name)")
        }
    }

    @Test func holdersOfNamedDevices() {
        let root = systemFixture()
        let all = DeviceHolders.find(root: root.path)
        func holders(_ name: DeviceName) -> [Int32] {
            DeviceHolders.holders(ofDevice: name, root: root.path).map(\.pid)
        }
        #expect(holders("hw:0") == [4242])
        #expect(holders("plughw:CARD=PCH,DEV=0") == [4242])
        #expect(holders("hw:PCH,3") == [300])
        #expect(holders("plughw:1,0") == [301, 500, 600])
        #expect(holders("hw:1,0,0") == [301, 500, 600])
        // Substream 1: pulseaudio holds substream 0; the fd-only holders may hold either.
        #expect(holders("hw:1,0,1") == [301, 500])
        #expect(holders("hw:1,1").isEmpty)
        #expect(holders("hw:0,7").isEmpty)
        #expect(holders("sysdefault:CARD=USB") == [301, 500, 600, 9999])
        #expect(holders("default") == all.map(\.pid))
        #expect(holders("hw:CARD=Nope,DEV=0") == all.map(\.pid))
    }

    @Test func exactHoldersForTheDeviceList() {
        let root = systemFixture()
        let all = DeviceHolders.find(root: root.path)
        func exact(_ name: DeviceName) -> [Int32] {
            DeviceHolders.exactHolders(ofDevice: name, among: all, root: root.path).map(\.pid)
        }
        #expect(exact("hw:CARD=USB,DEV=0") == [301, 500, 600])
        #expect(exact("plughw:CARD=PCH,DEV=0") == [4242])
        #expect(exact("hw:CARD=PCH,DEV=3") == [300])
        #expect(exact("sysdefault:CARD=USB").isEmpty)
        #expect(exact("front:CARD=PCH,DEV=0").isEmpty)
        #expect(exact("null").isEmpty)
        #expect(exact("default").isEmpty)
        #expect(DeviceHolders.exactHolders(ofDevice: "hw:0,0", among: [], root: root.path).isEmpty)
    }

    @Test func describesHolders() {
        #expect(DeviceHolders.describe([]) == "held by another program")
        #expect(DeviceHolders.describe([mpv]) == "held by pid 4242 (mpv --no-video song.mp3)")
        #expect(DeviceHolders.describe([hidden]) == "held by pid 9999")
        #expect(
            DeviceHolders.describe([mpv, aplay])
                == "held by pid 4242 (mpv --no-video song.mp3) and pid 300 (aplay -D hw:0,3 '/tmp/my file.wav')")
        var again = mpv
        again.device = 3
        #expect(DeviceHolders.describe([mpv, again]) == "held by pid 4242 (mpv --no-video song.mp3)")
        #expect(
            DeviceHolders.describe([kworker, pulseaudio, hidden])
                == "held by pid 301 (kworker/u8:2), pid 600 (pulseaudio --daemonize=no) and pid 9999")
        #expect(
            DeviceHolders.describe([kworker, pulseaudio, hidden, mpv, aplay])
                == "held by pid 301 (kworker/u8:2), pid 600 (pulseaudio --daemonize=no), pid 9999 and 2 more")
    }

    /// The exit-69 message ALSAOutput gives for EBUSY.
    @Test func busyMessage() {
        let root = systemFixture()
        let reason = DeviceHolders.busyReason(device: "hw:0", root: root.path)
        #expect(
            AnnounceError.deviceUnavailable(device: "hw:0", reason: reason).description
                == "device 'hw:0': busy, held by pid 4242 (mpv --no-video song.mp3)")
        #expect(AnnounceError.deviceUnavailable(device: "hw:0", reason: reason).exitCode == 69)
        #expect(DeviceHolders.busyReason(device: "hw:1,1", root: root.path) == "busy: another program is using it")
    }

    @Test func readableCommands() {
        func command(_ bytes: [UInt8]?, _ comm: String? = nil) -> String {
            DeviceHolders.readableCommand(cmdline: bytes, comm: comm)
        }
        #expect(command(argv("/usr/bin/mpv", "--no-video", "song.mp3"), "mpv\n") == "mpv --no-video song.mp3")
        #expect(command(argv("mpv", "a b.mp3")) == "mpv 'a b.mp3'")
        // Rewritten titles: one string with spaces, padded with NULs.
        #expect(command(Array("sshd: ann@pts/0".utf8) + [0, 0, 0, 0]) == "sshd: ann@pts/0")
        #expect(command([], "kworker/0:1\n") == "kworker/0:1")
        #expect(command(nil, "ab\u{7}c") == "ab?c")
        #expect(command(nil, nil) == "")
        #expect(command(argv("/dir/", "x")) == "/dir/ x")
        #expect(command(argv("say", "line1\nline2\u{9B}")) == "say line1?line2?")
        let long = command(argv("/usr/bin/mpv", String(repeating: "é", count: 200)))
        #expect(long.count == DeviceHolders.commandLimit)
        #expect(long == "mpv " + String(repeating: "é", count: DeviceHolders.commandLimit - 5) + "…")
    }

    /// argv longer than what is read of it (4 KiB) still names the program.
    @Test func longCommandLinesAreCut() {
        let root = FixtureRoot()
        root.file("proc/12/cmdline", argv("/usr/bin/mpv", String(repeating: "y", count: 10_000), "z"))
        root.link("proc/12/fd/4", to: "/dev/snd/pcmC0D0p")
        let holders = DeviceHolders.find(root: root.path)
        #expect(
            holders.map(\.command) == ["mpv " + String(repeating: "y", count: DeviceHolders.commandLimit - 5) + "…"])
    }

    @Test func playbackNodes() {
        #expect(DeviceHolders.playbackNode("/dev/snd/pcmC0D0p")! == (0, 0))
        #expect(DeviceHolders.playbackNode("/dev/snd/pcmC12D3p")! == (12, 3))
        for path in [
            "/dev/snd/pcmC0D0c", "/dev/snd/controlC0", "/dev/snd/pcmCD0p", "/dev/snd/pcmC0D0p (deleted)",
            "/dev/snd/pcmC0D0D0p", "socket:[1]", "/tmp/dev/snd/pcmC0D0p", "/dev/snd/pcmC+1D0p"
        ] {
            #expect(DeviceHolders.playbackNode(path) == nil, "\(path)")
        }
    }

    /// `announce devices --json` prints every key; unknown ones are null.
    @Test func jsonShape() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(
            String(decoding: try encoder.encode([aplay]), as: UTF8.self)
                == #"[{"card":0,"cardID":"PCH","command":"aplay -D hw:0,3 '/tmp/my file.wav'","device":3,"pid":300,"subdevice":null}]"#
        )
        #expect(
            try JSONDecoder().decode([DeviceHolder].self, from: try encoder.encode([mpv, aplay, hidden])) == [
                mpv, aplay, hidden
            ])
    }
}
