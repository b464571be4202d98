import AnnounceModel
import AnnounceSystem
import CALSA

#if canImport(Glibc)
    import Glibc
#endif

/// A process that has an ALSA hardware playback PCM open.
public struct DeviceHolder: Codable, Equatable, Sendable {
    /// The card index (`N` of `/proc/asound/cardN`, `C` of `/dev/snd/pcmCxDyp`).
    public var card: Int
    /// The PCM device on that card.
    public var device: Int
    /// The substream, when the kernel's status file told it; nil when only a
    /// `/proc/PID/fd` link to the device node was seen.
    public var subdevice: Int?
    /// The card's id (`/proc/asound/cardN/id`, e.g. "PCH"), when readable.
    public var cardID: String?
    /// The process (thread group) id; a thread that opened the PCM is reported as its process.
    public var pid: Int32
    /// A readable one-line command: argv from `/proc/PID/cmdline` (program by its
    /// base name, control characters replaced, trimmed to `commandLimit` characters),
    /// else `/proc/PID/comm`, else empty.
    public var command: String

    public init(card: Int, device: Int, subdevice: Int?, cardID: String?, pid: Int32, command: String) {
        self.card = card
        self.device = device
        self.subdevice = subdevice
        self.cardID = cardID
        self.pid = pid
        self.command = command
    }

    private enum CodingKeys: String, CodingKey { case card, device, subdevice, cardID, pid, command }

    /// Every key, unknown ones as null, so JSON readers see one shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(card, forKey: .card)
        try container.encode(device, forKey: .device)
        try container.encode(subdevice, forKey: .subdevice)
        try container.encode(cardID, forKey: .cardID)
        try container.encode(pid, forKey: .pid)
        try container.encode(command, forKey: .command)
    }
}

/// What an ALSA PCM name points at in hardware, as far as the name tells.
public struct DeviceTarget: Equatable, Sendable {
    public var card: Int
    /// nil for a plugin on a card (`sysdefault:CARD=PCH`, `front:0`, `dmix:1`):
    /// which of the card's devices it uses is up to the configuration.
    public var device: Int?
    /// nil when any substream will do (ALSA's SUBDEV -1, the default).
    public var subdevice: Int?

    public init(card: Int, device: Int?, subdevice: Int?) {
        self.card = card
        self.device = device
        self.subdevice = subdevice
    }
}

/// Who holds the sound device (DESIGN §3, "device is a resource shared with
/// other programs"): the processes with a hardware playback PCM open, found from
///
/// 1. `<root>/proc/asound/cardN/pcmDp/subS/status`, whose `owner_pid : P` line is
///    there while the substream is open (the file says `closed` otherwise). The
///    kernel records the opening *thread*, so P is mapped to its process through
///    the `Tgid:` line of `<root>/proc/P/status`;
/// 2. `<root>/proc/P/fd/*` links to `/dev/snd/pcmC<card>D<device>p`, for systems
///    where `/proc/asound` is hidden (containers mask it) or lacks `owner_pid`.
///
/// Both are merged, one entry per process and hardware device (a status entry,
/// which knows the substream, wins over a link). Our own process is left out.
/// Anything unreadable (other users' `/proc/P/fd` is EACCES, a process that
/// exits mid-scan) is skipped silently: this only ever improves a message.
/// A holder named by `owner_pid` is kept even when its `/proc/P` cannot be read
/// (hidepid, another user): the kernel says it holds the device, so its pid is
/// still worth printing, with an empty command.
///
/// `root` is the filesystem root to read from ("/" for the system, a fixture
/// tree in tests).
public enum DeviceHolders {
    /// The longest `DeviceHolder.command`, in characters (a trimmed command ends with "…").
    public static let commandLimit = 80

    /// Every process holding a hardware playback PCM, except `excluding`, sorted by
    /// card, device, substream, pid.
    public static func find(root: String = "/", excluding: Int32 = getpid()) -> [DeviceHolder] {
        let proc = joined(root, "proc")
        let asound = proc + "/asound"
        var found: [(card: Int, device: Int, subdevice: Int?, pid: Int32)] = []
        var seen = Set<HolderKey>()
        func add(card: Int, device: Int, subdevice: Int?, pid: Int32) {
            guard pid > 0, pid != excluding, seen.insert(HolderKey(pid: pid, card: card, device: device)).inserted
            else { return }
            found.append((card, device, subdevice, pid))
        }

        // 1. The kernel's own record of open substreams, in number order, so the
        // lowest substream a process holds is the one kept.
        for (card, cardPath) in numbered(asound, prefix: "card", suffix: "") {
            for (device, pcmPath) in numbered(cardPath, prefix: "pcm", suffix: "p") {
                for (subdevice, subPath) in numbered(pcmPath, prefix: "sub", suffix: "") {
                    guard
                        let owner = readText(subPath + "/status").flatMap({ field($0, "owner_pid") }).flatMap({
                            Int32($0)
                        }),
                        owner > 0
                    else { continue }
                    add(card: card, device: device, subdevice: subdevice, pid: processID(ofThread: owner, proc: proc))
                }
            }
        }

        // 2. Open descriptors on the device nodes.
        for pidEntry in directoryEntries(proc) {
            guard let pid = Int32(pidEntry), pid > 0, pid != excluding else { continue }
            let fdDirectory = proc + "/" + pidEntry + "/fd"
            for fdEntry in directoryEntries(fdDirectory) {
                guard let node = linkTarget(fdDirectory + "/" + fdEntry).flatMap(playbackNode) else { continue }
                add(card: node.card, device: node.device, subdevice: nil, pid: pid)
            }
        }

        return found.map { entry in
            DeviceHolder(
                card: entry.card, device: entry.device, subdevice: entry.subdevice,
                cardID: cardID(entry.card, asound: asound),
                pid: entry.pid, command: command(ofProcess: entry.pid, proc: proc))
        }.sorted {
            ($0.card, $0.device, $0.subdevice ?? -1, $0.pid) < ($1.card, $1.device, $1.subdevice ?? -1, $1.pid)
        }
    }

    /// The holders that can be what keeps the PCM `name` busy: those on its card,
    /// device and substream as far as the name tells (see `target(ofDevice:root:)`).
    /// Every holder when the name cannot be mapped to a card (`default`, `pulse`,
    /// a card id that is not found): we cannot follow a plugin chain, and the
    /// programs holding any card are the best guess.
    public static func holders(ofDevice name: DeviceName, root: String = "/", excluding: Int32 = getpid())
        -> [DeviceHolder]
    {
        let all = find(root: root, excluding: excluding)
        guard let target = target(ofDevice: name, root: root) else { return all }
        return holders(all, on: target)
    }

    /// The holders of `target`'s hardware: same card; same device when the target
    /// names one; same substream when both sides know it.
    public static func holders(_ holders: [DeviceHolder], on target: DeviceTarget) -> [DeviceHolder] {
        holders.filter { holder in
            holder.card == target.card
                && (target.device.map { $0 == holder.device } ?? true)
                && (target.subdevice.flatMap { wanted in holder.subdevice.map { $0 == wanted } } ?? true)
        }
    }

    /// The holders to list beside the PCM `name` in `announce devices`: only for a
    /// name that is one hardware device (`hw:`, `plughw:` with a known card), so
    /// a card's busy device is not repeated on each of its plugins, and `null` or
    /// `pulse` are never shown as busy.
    public static func exactHolders(ofDevice name: DeviceName, among holders: [DeviceHolder], root: String = "/")
        -> [DeviceHolder]
    {
        guard !holders.isEmpty, let target = target(ofDevice: name, root: root), target.device != nil else { return [] }
        return Self.holders(holders, on: target)
    }

    /// What the ALSA PCM name `name` points at, or nil when the name does not tell a card.
    ///
    /// - `hw:0`, `hw:0,0`, `hw:0,0,1`, `plughw:1,0`, `hw:CARD=PCH,DEV=0,SUBDEV=1`,
    ///   `hw:"PCH",3`: card, device (default 0) and substream (default any).
    /// - any other `plugin:ARGS` whose `CARD=` or first positional argument is a
    ///   card (`sysdefault:CARD=PCH`, `front:0,0`, `dmix:1`, `hdmi:CARD=HDMI,DEV=1`):
    ///   that card, device unknown.
    /// - no arguments (`default`, `pulse`, `hw`) or an argument that is no card: nil.
    ///
    /// A card is an index or an id from `<root>/proc/asound/cardN/id` (with `root`
    /// "/" also ALSA's own lookup, for systems where /proc/asound is hidden).
    public static func target(ofDevice name: DeviceName, root: String = "/") -> DeviceTarget? {
        let name = trimmed(name.rawValue)
        guard let colon = name.firstIndex(of: ":") else { return nil }
        let plugin = String(name[..<colon])
        var positional: [String] = []
        var keyed: [String: String] = [:]
        for argument in name[name.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false) {
            let argument = trimmed(String(argument))
            if let equals = argument.firstIndex(of: "=") {
                keyed[trimmed(String(argument[..<equals])).uppercased()] = unquoted(
                    String(argument[argument.index(after: equals)...]))
            } else {
                positional.append(unquoted(argument))
            }
        }
        func value(_ key: String, _ position: Int) -> String? {
            keyed[key] ?? (position < positional.count ? positional[position] : nil)
        }
        guard let cardName = value("CARD", 0), let card = cardIndex(cardName, root: root) else { return nil }
        guard plugin == "hw" || plugin == "plughw" else { return DeviceTarget(card: card, device: nil, subdevice: nil) }
        var device = 0
        if let text = value("DEV", 1), !text.isEmpty {
            guard let number = decimal(Substring(text)) else { return nil }
            device = number
        }
        let subdevice = value("SUBDEV", 2).flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
        return DeviceTarget(card: card, device: device, subdevice: subdevice)
    }

    /// One phrase for a message: "held by pid 4242 (mpv --no-video song.mp3)",
    /// "held by pid 1 (a) and pid 2 (b)", "held by pid 1 (a), pid 2 (b), pid 3 (c)
    /// and 2 more"; each process once; "pid 7" alone when its command is unknown;
    /// "held by another program" when there is no one to name.
    public static func describe(_ holders: [DeviceHolder]) -> String {
        var seen = Set<Int32>()
        let processes = holders.filter { seen.insert($0.pid).inserted }
            .map { $0.command.isEmpty ? "pid \($0.pid)" : "pid \($0.pid) (\($0.command))" }
        switch processes.count {
        case 0: return "held by another program"
        case 1: return "held by " + processes[0]
        case 2, 3:
            return "held by " + processes.dropLast().joined(separator: ", ") + " and " + processes[processes.count - 1]
        default: return "held by " + processes.prefix(3).joined(separator: ", ") + " and \(processes.count - 3) more"
        }
    }

    /// The reason of the exit-69 error when opening `device` failed with EBUSY:
    /// "busy, held by pid 4242 (mpv song.mp3)", or the plain "busy: another
    /// program is using it" when no holder can be seen.
    public static func busyReason(device: DeviceName, root: String = "/", excluding: Int32 = getpid()) -> String {
        let holders = holders(ofDevice: device, root: root, excluding: excluding)
        return BusyWarning.text(holders: holders.isEmpty ? nil : describe(holders))
    }

    // MARK: - Reading /proc

    private struct HolderKey: Hashable {
        var pid: Int32
        var card: Int
        var device: Int
    }

    /// The card's id (`PCH`) from `asound/cardN/id`; nil when unreadable or empty.
    private static func cardID(_ card: Int, asound: String) -> String? {
        guard let id = readText(asound + "/card\(card)/id").map(trimmed), !id.isEmpty else { return nil }
        return sanitized(id)
    }

    /// The process's command line for messages (see `readableCommand`).
    private static func command(ofProcess pid: Int32, proc: String) -> String {
        readableCommand(
            cmdline: readFilePrefix(proc + "/\(pid)/cmdline", limit: 4096), comm: readText(proc + "/\(pid)/comm"))
    }

    /// The process a thread belongs to (`Tgid:` of its status), or the id itself.
    private static func processID(ofThread id: Int32, proc: String) -> Int32 {
        guard let status = readText(proc + "/\(id)/status"), let group = field(status, "Tgid").flatMap({ Int32($0) }),
            group > 0
        else { return id }
        return group
    }

    /// (card, device) of a playback device node path, `/dev/snd/pcmC0D3p`.
    static func playbackNode(_ path: String) -> (card: Int, device: Int)? {
        let prefix = "/dev/snd/pcmC"
        guard path.hasPrefix(prefix), path.hasSuffix("p") else { return nil }
        let middle = path.dropFirst(prefix.count).dropLast()
        let parts = middle.split(separator: "D", omittingEmptySubsequences: false)
        guard parts.count == 2, let card = decimal(parts[0]), let device = decimal(parts[1]) else { return nil }
        return (card, device)
    }

    /// A command line for one line of text: argv joined by spaces, the program by
    /// its base name, arguments with spaces in single quotes, control characters
    /// as "?", at most `commandLimit` characters; `comm` when argv is empty
    /// (a kernel thread, a zombie) or unreadable.
    static func readableCommand(cmdline: [UInt8]?, comm: String?) -> String {
        var arguments = (cmdline ?? []).split(separator: 0, omittingEmptySubsequences: true)
            .map { sanitized(String(decoding: $0, as: UTF8.self)) }
        if let program = arguments.first, !program.contains(" "), let slash = program.lastIndex(of: "/"),
            program.index(after: slash) != program.endIndex
        {
            arguments[0] = String(program[program.index(after: slash)...])
        }
        var command = arguments.enumerated().map { index, argument in
            index > 0 && argument.contains(" ") ? "'" + argument + "'" : argument
        }.joined(separator: " ")
        if command.isEmpty { command = sanitized(trimmed(comm ?? "")) }
        if command.count > commandLimit { command = String(command.prefix(commandLimit - 1)) + "…" }
        return command
    }

    /// Control characters (C0, DEL, C1) as "?": another user's argv must not
    /// reach a terminal as escape sequences or break a one-line message.
    private static func sanitized(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar
                }))
    }

    /// The value of a `key : value` line (spaces around either side ignored).
    private static func field(_ text: String, _ key: String) -> String? {
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"), trimmed(String(line[..<colon])) == key else { continue }
            return trimmed(String(line[line.index(after: colon)...]))
        }
        return nil
    }

    private static func cardIndex(_ name: String, root: String) -> Int? {
        if let index = decimal(Substring(name)) { return index }
        guard !name.isEmpty else { return nil }
        let asound = joined(root, "proc/asound")
        for entry in directoryEntries(asound) {
            guard let card = number(entry, prefix: "card", suffix: ""),
                let id = readText(asound + "/" + entry + "/id"), trimmed(id) == name
            else { continue }
            return card
        }
        guard root == "/" || root.isEmpty else { return nil }
        let index = snd_card_get_index(name)
        return index >= 0 ? Int(index) : nil
    }

    /// The entries of a directory named `<prefix>N<suffix>`, as (N, path), by N.
    private static func numbered(_ directory: String, prefix: String, suffix: String) -> [(Int, String)] {
        directoryEntries(directory)
            .compactMap { name in number(name, prefix: prefix, suffix: suffix).map { ($0, directory + "/" + name) } }
            .sorted { $0.0 < $1.0 }
    }

    /// N of `<prefix>N<suffix>`, digits only.
    private static func number(_ name: String, prefix: String, suffix: String) -> Int? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else {
            return nil
        }
        return decimal(name.dropFirst(prefix.count).dropLast(suffix.count))
    }

    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    private static func unquoted(_ text: String) -> String {
        let text = trimmed(text)
        guard text.count >= 2, let first = text.first, first == "\"" || first == "'", text.last == first else {
            return text
        }
        return String(text.dropFirst().dropLast())
    }

    private static func trimmed(_ text: String) -> String { text.trimming(" \t\n\r") }

    private static func joined(_ root: String, _ path: String) -> String {
        root.hasSuffix("/") ? root + path : root + "/" + path
    }

    /// Where a symbolic link points, as written (not resolved), or nil.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let length = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count) }
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length], as: UTF8.self)
    }

    private static func readText(_ path: String) -> String? {
        readFilePrefix(path, limit: 16384).map { String(decoding: $0, as: UTF8.self) }
    }
}
