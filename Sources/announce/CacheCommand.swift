import AnnounceModel
import AnnounceNetwork
import AnnounceSources
import AnnounceSystem
import ArgumentParser

/// `announce cache [--json]`, `announce cache clear`: what is kept to spare work: `say`'s
/// rendered sentences and downloaded URLs.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "cache",
        abstract: "Show or clear what announce keeps to spare work: say's renders and downloads.",
        discussion: """
            The daemon keeps each sentence `say` rendered in $XDG_CACHE_HOME/announce/speech \
            (else ~/.cache/announce/speech), so a repeated announcement runs no speech engine; \
            the least recently used go first beyond the config file's [speech] cache-size \
            (64 MiB by default). URLs played with --cache (or [download] cache = yes) are kept \
            in $XDG_CACHE_HOME/announce/downloads and revalidated with the server (ETag, \
            If-Modified-Since) when played again, within [download] cache-size (256 MiB). \
            `announce cache` shows where each is, how many entries it holds and their size; \
            `announce cache clear` deletes them (nothing queued is lost: a sentence is rendered \
            again, a URL downloaded again, when next played).

            Exit status: 0; 64 for an unknown action.
            """)

    @Argument(
        help: ArgumentHelp("clear: delete every render and download kept.", valueName: "action"),
        completion: .list(["clear"]))
    var action: String?

    @Flag(help: "One JSON object {v, caches: [{kind, path, entries, bytes, limit}]} (docs/json.md, cache).")
    var json = false

    @OptionGroup var verbosity: QuietFlag

    func validate() throws {
        if let action, action != "clear" {
            throw ValidationError("cache \(action): unknown action; did you mean 'clear'?")
        }
    }

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        let settings = UserConfiguration.load().configuration
        guard let speech = SpeechCache.user(limitBytes: settings.speechCacheBytes)?.entries,
            let downloads = DownloadCache.user(limitBytes: settings.downloadCacheBytes)?.entries
        else {
            throw reportedExit(.unavailable("no cache directory: neither XDG_CACHE_HOME nor HOME is an absolute path"))
        }
        let caches = [("speech", speech, "render"), ("downloads", downloads, "download")]
        let cleared = action == "clear" ? caches.map { $0.1.clear() } : nil
        if json {
            print(
                jsonLine(
                    Versioned(
                        Listing(
                            caches: caches.map { kind, cache, _ in
                                let (entries, bytes) = cache.contents()
                                return Listed(
                                    kind: kind, path: cache.path, entries: entries, bytes: bytes,
                                    limit: cache.limitBytes)
                            }))))
            return
        }
        for (index, (kind, cache, noun)) in caches.enumerated() {
            if let cleared {
                output("\(kind): \(cleared[index]) \(noun)\(cleared[index] == 1 ? "" : "s") deleted from \(cache.path)")
            } else {
                let (entries, bytes) = cache.contents()
                output(
                    "\(kind): \(entries) \(noun)\(entries == 1 ? "" : "s"), \(Self.size(bytes)) of \(Self.size(cache.limitBytes)), in \(cache.path)"
                )
            }
        }
    }

    /// `12.3 MiB`, `640 KiB`, `0 B`.
    static func size(_ bytes: Int64) -> String {
        if bytes >= 1 << 20 { return String(Double(bytes * 10 / (1 << 20)) / 10) + " MiB" }
        if bytes >= 1 << 10 { return "\(bytes >> 10) KiB" }
        return "\(bytes) B"
    }
}

/// `announce cache --json` (docs/json.md, cache).
private struct Listing: Encodable {
    var caches: [Listed]
}

private struct Listed: Encodable {
    var kind: String
    var path: String
    var entries: Int
    var bytes: Int64
    var limit: Int64
}
