import AnnounceClient
import AnnounceModel
import AnnounceSystem
import ArgumentParser

/// Usage errors (64) as one line, `announce: <input>: <reason>`, with the nearest command,
/// option or value suggested when the input looks like a typo of one.
enum UsageErrors {
    static let commands: [ParsableCommand.Type] = AnnounceCommand.configuration.subcommands

    /// What ArgumentParser does not report, or reports as something else: an unknown command
    /// (`announce paly`, `announce help plya`), and more arguments than it parses in good time
    /// (`Limits.maxArguments`). Checked before parsing.
    static func check(_ arguments: [String]) -> String? {
        if arguments.count > Limits.maxArguments {
            return
                "\(arguments.count) arguments: at most \(Limits.maxArguments); give say a long text as one argument or on stdin (say -)"
        }
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        if first == "help" {
            if arguments.count > 2 {
                return
                    "help \(arguments.dropFirst().joined(separator: " ")): one command at most, e.g. announce help play"
            }
            guard let topic = arguments.dropFirst().first, !topic.hasPrefix("-"), topic != "help",
                command(named: topic) == nil
            else { return nil }
            return "help \(topic): " + unknownCommand(topic)
        }
        return command(named: first) == nil ? "\(first): " + unknownCommand(first) : nil
    }

    /// ArgumentParser's message for a usage error, reworded as one line naming the input.
    static func line(for message: String, arguments: [String]) -> String {
        let command = arguments.first.flatMap(command(named:))
        let see = " (see 'announce \(command.map { $0._commandName + " " } ?? "")--help')"
        if let name = between(message, "Unknown option '", "'") {
            let longNames = command.map(longOptionNames(of:)) ?? []
            let hint = nearest(name, among: longNames).map { "; did you mean '\($0)'?" } ?? ""
            return "\(name): unknown option\(hint)\(hint.isEmpty ? see : "")"
        }
        if let value = between(message, "The value '", "' is invalid for '") {
            let rest = message.dropFirst("The value '\(value)' is invalid for '".count)
            let name = String(rest.prefix { $0 != " " && $0 != "'" })
            if let colon = rest.firstRange(of: "': ") {
                return "\(name) \(value): \(rest[colon.upperBound...])"
            }
            let values = listedValues(in: message)
            guard !values.isEmpty else { return "\(name) \(value): not a valid value\(see)" }
            let hint = nearest(value, among: values).map { "; did you mean '\($0)'?" } ?? ""
            return "\(name) \(value): not one of \(values.joined(separator: ", "))\(hint)"
        }
        return message + see
    }

    /// The candidate `word` most likely mistypes: the only one it begins (`--prio`), else the
    /// closest by edit distance, counting a swap of neighbours as one edit (`paly`).
    static func nearest(_ word: String, among all: [String]) -> String? {
        // The word itself is no suggestion: an option named only in the help's prose
        // (`cancel --json`) is unknown, and not a typo of itself.
        let candidates = all.filter { $0 != word }
        let prefixed = candidates.filter { $0.hasPrefix(word) }
        if prefixed.count == 1, word.trimmingDashes.count >= 2 { return prefixed[0] }
        let limit = word.trimmingDashes.count <= 4 ? 1 : 2
        let scored = candidates.map { (candidate: $0, distance: editDistance(word, $0)) }.filter {
            $0.distance <= limit
        }
        return scored.min { $0.distance < $1.distance }?.candidate
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours each cost one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
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

    /// Every `--name` a command's help mentions: its long options. (Read from the help text
    /// only when a usage error is reported; no types of our own, which every start would pay
    /// for in the runtime's conformance scans.)
    private static func longOptionNames(of command: ParsableCommand.Type) -> [String] {
        var names: [String] = []
        for word in command.helpMessage(columns: 1000).split(whereSeparator: {
            !($0.isLetter || $0.isNumber || $0 == "-")
        })
        where word.hasPrefix("--") && word.count > 2 && !names.contains(String(word)) {
            names.append(String(word))
        }
        return names
    }

    /// The values ArgumentParser lists after "Please provide one of": 'a', 'b' or 'c', or a
    /// bulleted list.
    private static func listedValues(in message: String) -> [String] {
        guard let list = message.split(separator: "Please provide one of", maxSplits: 1).dropFirst().first else {
            return []
        }
        if list.contains("\n  - ") {
            return list.split(separator: "\n").compactMap { $0.hasPrefix("  - ") ? String($0.dropFirst(4)) : nil }
        }
        return list.split(separator: "'").enumerated().compactMap { $0.offset % 2 == 1 ? String($0.element) : nil }
    }
}

extension String {
    fileprivate var trimmingDashes: Substring { drop { $0 == "-" } }
}
