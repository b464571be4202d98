import AnnounceKit
import ArgumentParser

struct Cancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel items by id, or every item with a tag.",
        discussion: "Exits 0 when everything named was cancelled; 75 when some id was unknown or already final (or no daemon runs). --tag exits 0 even when no item has the tag.")

    @Argument(help: "Item ids, as `play --no-wait` prints them.")
    var ids: [String] = []

    @Option(help: "Cancel every queued, scheduled or playing item with this tag.")
    var tag: String?

    func validate() throws {
        if ids.isEmpty == (tag == nil) { throw ValidationError("Give item ids or --tag, not both and not neither.") }
    }

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: false)
        do {
            guard let client = try DaemonClient.connect(autoStart: false) else {
                if !ids.isEmpty {
                    printError("no daemon running: \(ids.joined(separator: ", ")) not queued")
                    throw ExitCode(75)
                }
                return
            }
            let reply = try client.call(Request(.cancel, ids: ids.isEmpty ? nil : ids, tag: tag))
            if let unknown = reply.unknown, !unknown.isEmpty {
                printError("not queued (unknown or already final): \(unknown.joined(separator: ", "))")
                throw ExitCode(75)
            }
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }
}
