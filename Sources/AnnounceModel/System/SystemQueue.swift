/// The system queue (DESIGN §8): one daemon for the machine, its callers known by the socket.

/// Who queued an item on the system queue: the uid the socket gave (SO_PEERCRED), never one a
/// request names, and that user's name when it was accepted.
public struct ItemOwner: Codable, Equatable, Hashable, Sendable {
    public var uid: UInt32
    public var name: String
}

/// The files a system-queue client opened with its own rights and sent beside the request line
/// as descriptors (SCM_RIGHTS): each is the index of one among those that came with the line.
/// The daemon copies them into its media directory before it answers; it never opens a
/// caller's path.
public struct HandedFiles: Codable, Equatable, Sendable {
    public var audio: Int?
    public var chime: Int?
    public var chimeAfter: Int?

    public init(audio: Int? = nil, chime: Int? = nil, chimeAfter: Int? = nil) {
        self.audio = audio
        self.chime = chime
        self.chimeAfter = chimeAfter
    }

    public var indices: [Int] { [audio, chime, chimeAfter].compactMap { $0 } }
}

/// `[system]` in the system config file (`/etc/announce/config`).
public struct SystemSettings: Equatable, Sendable {
    /// Items one user may have waiting or playing; a request past it is refused whole (69).
    public var maxItemsPerUser = 100
    /// Bytes of handed files one user's waiting items may hold in the media directory.
    public var maxBytesPerUser: Int64 = 1 << 30
    /// Devices a non-root caller may name (`--device`), exactly; empty: only the daemon's own.
    public var devices: [DeviceName] = []
    /// Members of this group may pause, resume, stop, clear and set quiet mode, as root may.
    public var controlGroup: String?
    /// Whose sound server items are heard through on a desktop; nil: the user active on seat0.
    public var listener: String?

    public init() {}

    public static let itemsRange = 1...100_000
    /// The group whose members (and root) may use the system queue.
    public static let group = "announce"
    /// The user the daemon runs as when started as root, unless `--run-as`.
    public static let user = "announce"
    /// Shown instead of another user's path, text or URL.
    public static let othersLabel = "(another user's)"
    /// What a listener's daemon is told an item is: its id, never its path or text.
    public static func forwardedLabel(_ id: ItemID) -> String { "system queue item \(id)" }
}

/// What a caller of the system queue may do, decided from who the socket says it is.
public struct Caller: Equatable, Sendable {
    public var uid: UInt32
    public var name: String
    /// Root, or the daemon's own user (its zones' bridge): sees and may do everything.
    public var isTrusted: Bool
    /// The daemon's own user (its zones' bridge): the one caller that names media files.
    public var isSelf: Bool
    /// May queue items: trusted, or a member of `SystemSettings.group`.
    public var mayEnqueue: Bool
    /// May pause, resume, stop, clear and set quiet mode: root, or the control group.
    public var mayControl: Bool

    public init(uid: UInt32, name: String, isTrusted: Bool, isSelf: Bool = false, mayEnqueue: Bool, mayControl: Bool) {
        self.uid = uid
        self.name = name
        self.isTrusted = isTrusted
        self.isSelf = isSelf
        self.mayEnqueue = mayEnqueue
        self.mayControl = mayControl
    }

    public var owner: ItemOwner { ItemOwner(uid: uid, name: name) }

    /// Its own item, or any item for a trusted caller.
    public func owns(_ owner: ItemOwner?) -> Bool { isTrusted || owner?.uid == uid }

    /// Why it may not use the queue at all.
    public var outsider: String { Self.outsider(name) }

    /// Why user `name` may not use the system queue: the daemon's words, and the client's when the
    /// socket's group already kept it out.
    public static func outsider(_ name: String) -> String {
        "not allowed to use the system queue: \(name) is not in group '\(SystemSettings.group)'"
    }
}

extension Event {
    /// The same event, naming `owner` as its item's.
    public func owned(by owner: ItemOwner?) -> Event {
        var wire = Wire(self)
        guard wire.id != nil else { return self }
        wire.owner = owner
        return (try? Event(wire)) ?? self  // what Wire(self) holds is always an event
    }

    /// What a caller who does not own the item sees: owner, id, priority and kind; no path,
    /// text or URL, device, format, title or words of the reason.
    public func privateView() -> Wire {
        let whole = Wire(self)
        guard let item = whole.item else { return whole }
        var view = Wire(
            whole.event, time: time,
            item: EventItem(
                item.id, path: item.path == nil ? nil : SystemSettings.othersLabel, priority: item.priority,
                owner: item.owner))
        if case .other? = whole.reason {} else { view.reason = whole.reason }
        view.shouldResume = whole.shouldResume
        (view.heard, view.duration, view.percent) = (whole.heard, whole.duration, whole.percent)
        view.outcome = whole.outcome.map {
            Outcome($0.kind, reason: $0.reason == nil ? nil : $0.kind.rawValue, code: $0.code)
        }
        (view.ahead, view.wait, view.at) = (whole.ahead, whole.wait, whole.at)
        return view
    }
}

extension DaemonStatus {
    /// What `caller` may see: its own items whole, others' as `ItemStatus.privateView`; all of it
    /// for a trusted caller, or on a user's own daemon (nil).
    public func view(for caller: Caller?) -> DaemonStatus {
        guard let caller, !caller.isTrusted else { return self }
        func view(_ item: ItemStatus) -> ItemStatus { item.owner?.uid == caller.uid ? item : item.privateView() }
        var status = self
        status.playing = playing.map(view)
        status.mixing = mixing?.map(view)
        status.queued = queued.map(view)
        status.scheduled = scheduled.map(view)
        return status
    }
}

extension ItemStatus {
    /// As `Event.privateView`: owner, id, priority, state and times.
    public func privateView() -> ItemStatus {
        ItemStatus(
            id: id, state: state, path: SystemSettings.othersLabel, priority: priority, heard: heard,
            duration: duration, eligibleAt: eligibleAt, expiresAt: expiresAt, owner: owner)
    }
}
