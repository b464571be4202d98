import CPosix

/// What `announce --version` prints: the version of debian/changelog's first entry, its one place.
public enum AnnounceVersion {
    public static let current: String = parse(String(cString: announce_changelog_head()))

    /// `VERSION` from `announce (VERSION) DIST; urgency=U`; "unknown" for anything else.
    static func parse(_ head: String) -> String {
        guard let open = head.firstIndex(of: "("), let close = head[open...].firstIndex(of: ")"),
            head.index(after: open) < close
        else { return "unknown" }
        return String(head[head.index(after: open)..<close])
    }
}
