import AnnounceModel
import AnnounceOutput

#if canImport(Glibc)
    import Glibc
#endif

extension Play {
    /// A URL the daemon downloads and plays as it arrives: checked there, as it plays (its
    /// failures are the item's outcome: 66 unreachable, 65 not audio). The caller's proxy
    /// variables go with it (`callerProxies`).
    func urlClip(_ url: String, scheme: String) throws(AnnounceError) -> Clip {
        guard Clip.urlSchemes.contains(scheme) else {
            throw .cannotOpen(
                path: url,
                reason:
                    "announce plays \(Clip.urlSchemes.dropLast().joined(separator: ", ")) and \(Clip.urlSchemes.last ?? "") URLs, not \(scheme)"
            )
        }
        var clip = try itemClip(url)
        clip.url = url
        clip.cache = cache
        clip.proxies = callerProxies()
        return clip
    }
}

/// The caller's proxy variables, which the daemon uses for this item's URL and no others of its
/// own (a download's and a live stream's alike); nil when none is set.
func callerProxies() -> [String: String]? {
    let proxies = Clip.proxyVariables.compactMap { name in getenv(name).map { (name, String(cString: $0)) } }
    return proxies.isEmpty ? nil : Dictionary(proxies, uniquingKeysWith: { first, _ in first })
}
