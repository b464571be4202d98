import AnnounceClient
import AnnounceModel
import AnnounceSystem
import ArgumentParser

/// Shell completion of `cancel`'s ids: the items a running daemon has (none without one).
private let liveIDCompletion = CompletionKind.custom { _, _, _ in
    guard let client = try? DaemonClient.connect(autoStart: false),
        let status = try? client.call(.status).status
    else { return [] }
    return liveIDs(in: status).map(\.rawValue)
}

/// The ids `cancel` can name: playing, mixing, queued and scheduled.
private func liveIDs(in status: DaemonStatus) -> [ItemID] {
    ([status.playing].compactMap { $0 } + (status.mixing ?? []) + status.queued + status.scheduled).map { $0.id }
}

struct Cancel: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "cancel",
        abstract: "Cancel items by id, or every item with a tag.",
        discussion: """
            An id may be shortened to any prefix that only one queued, scheduled, playing or \
            mixing item's id begins with (as git takes commit ids). Exits 0 when everything named \
            was cancelled; 75 when some id was unknown or already final (or no daemon runs); 64 \
            when a prefix fits several items (they are named). --tag exits 0 even when no item \
            has the tag.
            """)

    @Argument(
        help: "Item ids as `play --no-wait` prints them, or unique prefixes of them.", completion: liveIDCompletion)
    var ids: [String] = []

    @Option(help: "Cancel every queued, scheduled or playing item with this tag.")
    var tag: String?

    @OptionGroup var verbosity: QuietFlag

    func validate() throws {
        if ids.isEmpty == (tag == nil) { throw ValidationError("Give item ids or --tag, not both and not neither.") }
        if ids.contains("") { throw ValidationError("an item id cannot be empty") }
        // The rule play's --tag keeps: no item ever has a tag that breaks it.
        if let tag, let problem = ItemRequest.tagProblem(tag) { throw ValidationError(optionText(problem)) }
    }

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        do {
            let runtime = try RuntimeDirectory.forClient(RuntimeDirectory.clientTarget())
            guard let client = try DaemonClient.connectToQueue(runtime: runtime) else {
                if !ids.isEmpty {
                    printError("no daemon running: \(ids.joined(separator: ", ")) not queued")
                    throw ExitCode(Outcome.notPlayedExitCode)
                }
                return
            }
            let reply = try client.call(.cancel(try tag.map(CancelTarget.tag) ?? .ids(resolved(on: client))))
            if let unknown = reply.unknown, !unknown.isEmpty {
                if !verbosity.quiet {
                    printError("not queued (unknown or already final): \(unknown.listed)")
                }
                throw ExitCode(Outcome.notPlayedExitCode)
            }
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }

    /// The ids with every unique prefix made whole (ItemIDPrefix); an ambiguous one is a usage error.
    private func resolved(on client: DaemonClient) throws -> [ItemID] {
        // Whole ids need no look-up.
        guard ids.contains(where: { $0.utf8.count < 12 }) else { return ids.map { ItemID($0) } }
        guard let status = try client.call(.status).status else {
            throw AnnounceError.internal("status reply without status")
        }
        return try ids.map { given in
            switch ItemIDPrefix.resolve(given, among: liveIDs(in: status)) {
            case .id(let id): return id
            case .ambiguous(let candidates):
                throw AnnounceError.usage("\(given): ambiguous id prefix of \(candidates.listed)")
            }
        }
    }
}
