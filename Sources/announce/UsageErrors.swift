import ArgumentParser
import FoundationEssentials

/// Usage errors (64) as one line, `announce: <input>: <reason>`, with the nearest command,
/// option or value suggested when the input looks like a typo of one.
enum UsageErrors {
    static let commands: [ParsableCommand.Type] = AnnounceCommand.configuration.subcommands

    /// What ArgumentParser does not report, or reports as something else: an unknown command
    /// (`announce paly`, `announce help plya`). Checked before parsing.
    static func check(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        if first == "help" {
            guard let topic = arguments.dropFirst().first, !topic.hasPrefix("-"), topic != "help", command(named: topic) == nil
            else { return nil }
            return "help \(topic): " + unknownCommand(topic)
        }
        return command(named: first) == nil ? "\(first): " + unknownCommand(first) : nil
    }

    /// ArgumentParser's message for a usage error, reworded as one line naming the input.
    static func line(for message: String, arguments: [String]) -> String {
        let command = arguments.first.flatMap(command(named:))
        let see = " (see 'announce \(command.map { $0._commandName + " " } ?? "")--help')"
        let options = command.map(optionInfo(of:)) ?? []
        if let name = between(message, "Unknown option '", "'") {
            let longNames = options.flatMap { $0.longNames }
            let hint = nearest(name, among: longNames).map { "; did you mean '\($0)'?" } ?? ""
            return "\(name): unknown option\(hint)\(hint.isEmpty ? see : "")"
        }
        if let value = between(message, "The value '", "' is invalid for '") {
            let rest = message.dropFirst("The value '\(value)' is invalid for '".count)
            let name = String(rest.prefix { $0 != " " && $0 != "'" })
            if let colon = rest.firstRange(of: "': ") {
                return "\(name) \(value): \(rest[colon.upperBound...])"
            }
            let values = options.first { $0.longNames.contains(name) }?.values ?? []
            guard !values.isEmpty else { return "\(name) \(value): not a valid value\(see)" }
            let hint = nearest(value, among: values).map { "; did you mean '\($0)'?" } ?? ""
            return "\(name) \(value): not one of \(values.joined(separator: ", "))\(hint)"
        }
        return message + see
    }

    /// The candidate `word` most likely mistypes: the only one it begins (`--prio`), else the
    /// closest by edit distance, counting a swap of neighbours as one edit (`paly`).
    static func nearest(_ word: String, among candidates: [String]) -> String? {
        let prefixed = candidates.filter { $0.hasPrefix(word) && $0 != word }
        if prefixed.count == 1, word.trimmingDashes.count >= 2 { return prefixed[0] }
        let limit = word.trimmingDashes.count <= 4 ? 1 : 2
        let scored = candidates.map { (candidate: $0, distance: editDistance(word, $0)) }.filter { $0.distance <= limit }
        return scored.min { $0.distance < $1.distance }?.candidate
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours each cost one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    private static func command(named name: String) -> ParsableCommand.Type? {
        commands.first { $0._commandName == name }
    }

    private static func unknownCommand(_ name: String) -> String {
        let names = commands.map { $0._commandName }
        if let near = nearest(name, among: names) { return "unknown command; did you mean '\(near)'?" }
        return "unknown command; commands are \(names.joined(separator: ", "))"
    }

    /// Text between `start` (at the beginning of `text`) and the next `end`.
    private static func between(_ text: String, _ start: String, _ end: String) -> String? {
        guard text.hasPrefix(start) else { return nil }
        let rest = text.dropFirst(start.count)
        guard let close = rest.firstRange(of: end) else { return nil }
        return String(rest[..<close.lowerBound])
    }

    /// A command's options as ArgumentParser describes them (`--experimental-dump-help`); read
    /// only when a usage error is being reported.
    private static func optionInfo(of command: ParsableCommand.Type) -> [OptionInfo] {
        let dump = Data(command._dumpHelp().utf8)
        return (try? JSONDecoder().decode(HelpDump.self, from: dump))?.command.arguments ?? []
    }

    private struct HelpDump: Decodable {
        struct Command: Decodable { var arguments: [OptionInfo]? }
        var command: Command
    }

    struct OptionInfo: Decodable {
        struct Name: Decodable { var kind: String; var name: String }
        var names: [Name]?
        var allValues: [String]?
        var longNames: [String] { (names ?? []).filter { $0.kind == "long" }.map { "--" + $0.name } }
        var values: [String] { allValues ?? [] }
    }
}

private extension String {
    var trimmingDashes: Substring { drop { $0 == "-" } }
}
