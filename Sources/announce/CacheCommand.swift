import ArgumentParser
import AnnounceModel
import AnnounceSystem
import AnnounceSources

/// `announce cache [--json]`, `announce cache clear`: what is kept to spare work (today
/// `say`'s rendered sentences).
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or clear what announce keeps to spare work: say's rendered sentences.",
        discussion: """
            The daemon keeps each sentence `say` rendered in $XDG_CACHE_HOME/announce/speech \
            (else ~/.cache/announce/speech), so a repeated announcement runs no speech engine; \
            the least recently used go first beyond the config file's [speech] cache-size \
            (64 MiB by default). `announce cache` shows where it is, how many renders it holds \
            and their size; `announce cache clear` deletes them (nothing queued is lost: a \
            sentence is rendered again when it is next said).

            Exit status: 0; 64 for an unknown action.
            """)

    @Argument(help: ArgumentHelp("clear: delete every render.", valueName: "action"), completion: .list(["clear"]))
    var action: String?

    @Flag(help: "One JSON object {v, caches: [{kind, path, entries, bytes, limit}]} (docs/json.md, cache).")
    var json = false

    @OptionGroup var verbosity: QuietFlag

    func validate() throws {
        if let action, action != "clear" { throw ValidationError("cache \(action): unknown action; did you mean 'clear'?") }
    }

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        let limit = UserConfiguration.load().configuration.speechCacheBytes
        guard let cache = SpeechCache.user(limitBytes: limit) else {
            throw reportedExit(.unavailable("no cache directory: neither XDG_CACHE_HOME nor HOME is an absolute path"))
        }
        let cleared = action == "clear" ? cache.clear() : nil
        let (entries, bytes) = cache.contents()
        if json {
            print(jsonLine(Versioned(Listing(caches: [Listed(kind: "speech", path: cache.directory, entries: entries,
                                                              bytes: bytes, limit: limit)]))))
        } else if let cleared {
            output("speech: \(cleared) render\(cleared == 1 ? "" : "s") deleted from \(cache.directory)")
        } else {
            output("speech: \(entries) render\(entries == 1 ? "" : "s"), \(Self.size(bytes)) of \(Self.size(limit)), in \(cache.directory)")
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
