import Foundation
import Testing

/// Usage errors as one line with a suggestion, `-q` on every subcommand, and id prefixes for
/// `cancel`: what a user types at a terminal or in a crontab.
@Suite("Command line")
struct CommandLineTests {
    struct UsageCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var line: String
        var testDescription: String {
            arguments.count <= 8
                ? arguments.joined(separator: " ")
                : "\(arguments.prefix(2).joined(separator: " ")) … (\(arguments.count))"
        }
    }

    static let usageCases: [UsageCase] = [
        UsageCase(arguments: ["paly", "a.wav"], line: "announce: paly: unknown command; did you mean 'play'?"),
        UsageCase(arguments: ["help", "plya"], line: "announce: help plya: unknown command; did you mean 'play'?"),
        UsageCase(arguments: ["stauts"], line: "announce: stauts: unknown command; did you mean 'status'?"),
        UsageCase(
            arguments: ["play", "--prio", "high", "a.wav"],
            line: "announce: --prio: unknown option; did you mean '--priority'?"),
        UsageCase(
            arguments: ["play", "--priorty", "high", "a.wav"],
            line: "announce: --priorty: unknown option; did you mean '--priority'?"),
        UsageCase(
            arguments: ["play", "--priority", "hihg", "a.wav"],
            line: "announce: --priority hihg: not one of low, normal, high, critical; did you mean 'high'?"),
        UsageCase(
            arguments: ["play", "--volume", "-1", "a.wav"],
            line: "announce: --volume -1: out of range 0…1 (see 'announce play --help')"),
        UsageCase(
            arguments: ["play", "--drop-after", "-0.5", "a.wav"],
            line: "announce: --drop-after -0.5: out of range 0…1 (see 'announce play --help')"),
        UsageCase(
            arguments: ["play", "--at", "25:00", "a.wav"],
            line: "announce: --at 25:00: hour 25 is past 23 (a 24-hour clock runs 00:00 to 23:59)"),
        UsageCase(arguments: ["play", "--at", "7:60", "a.wav"], line: "announce: --at 7:60: minute 60 is past 59"),
        // A value that starts with "-" is a bad time, not a missing value.
        UsageCase(
            arguments: ["play", "--at", "-1:00", "a.wav"],
            line: "announce: --at -1:00: not a time of day; give HH:MM or HH:MM:SS on a 24-hour clock, like 07:30"),
        UsageCase(
            arguments: ["play", "--delay", "-5s", "a.wav"], line: "announce: --delay -5s: a duration cannot be negative"
        ),
        UsageCase(
            arguments: ["play", "--expire", "1:75", "a.wav"],
            line: "announce: --expire 1:75: seconds must be below 60, not 75"),
        UsageCase(
            arguments: ["play", "--delay", "2x", "a.wav"],
            line: "announce: --delay 2x: unknown unit 'x'; use h, m, s or ms, like 90, 1.5s, 500ms, 1m30s or 1:30"),
        UsageCase(
            arguments: ["quiet", "until", "24:00"],
            line:
                "announce: until 24:00: hour 24 is past 23 (a 24-hour clock runs 00:00 to 23:59) (see 'announce quiet --help')"
        ),
        UsageCase(
            arguments: ["info", "--jsn", "a.wav"], line: "announce: --jsn: unknown option; did you mean '--json'?"),
        // Without a FILE, the unknown option or the bad value is still what is reported.
        UsageCase(arguments: ["info", "--jsn"], line: "announce: --jsn: unknown option; did you mean '--json'?"),
        UsageCase(arguments: ["play", "--helpp"], line: "announce: --helpp: unknown option; did you mean '--help'?"),
        // Refused before ArgumentParser, whose time grows with the square of the words.
        UsageCase(
            arguments: ["say"] + Array(repeating: "word", count: 4096),
            line: "announce: 4097 arguments: at most 4096; give say a long text as one argument or on stdin (say -)"),
        UsageCase(
            arguments: ["cancel", "--tag", ""],
            line: "announce: --tag must be 1 to 256 bytes (see 'announce cancel --help')"
        ),
        // Named in the help's prose, not an option here: no "did you mean '--json'?".
        UsageCase(
            arguments: ["cancel", "--json", "0a0ad6c1de08"],
            line: "announce: --json: unknown option (see 'announce cancel --help')"),
        UsageCase(
            arguments: ["play", "--volume", "-1"],
            line: "announce: --volume -1: out of range 0…1 (see 'announce play --help')"),
        UsageCase(
            arguments: ["alert", "--volume", "2"],
            line: "announce: --volume 2: out of range 0…1 (see 'announce alert --help')"),
        UsageCase(
            arguments: ["play"], line: "announce: Missing expected argument '<files> ...' (see 'announce play --help')"),
        UsageCase(
            arguments: ["help", "play", "extra"],
            line: "announce: help play extra: one command at most, e.g. announce help play")
    ]

    @Test(
        "every command's --help reads as prose: no Swift escapes or line-continuation backslashes leaked into it",
        arguments: [
            "play", "say", "voices", "cache", "alert", "queue", "cancel", "quiet", "info", "devices", "hosts", "daemon"
        ])
    func helpIsClean(_ command: String) async throws {
        let help = try await Runner.announce([command, "--help"])
        #expect(help.status == 0, "\(help)")
        #expect(
            !help.stdout.contains("\\(") && !help.stdout.contains("\\\n"), "announce \(command) --help: \(help.stdout)")
    }

    @Test("--start is echoed as it was given: 1:02:03 as 1:02:03.0")
    func startPastTheEnd() async throws {
        let file = try Harness.fixture("wav16-stereo.wav")
        let outcome = try await Runner.announce(["play", "-d", "null", "--start", "1:02:03", file])
        #expect(
            outcome.status == 64 && outcome.stderrLines.count == 1
                && outcome.stderrLines[0].hasPrefix("announce: \(file): --start 1:02:03.0 is at or past the end ("),
            "\(outcome)")
    }

    @Test("usage errors: 64, one line naming the input and the nearest valid one", arguments: usageCases)
    func usage(_ test: UsageCase) async throws {
        let outcome = try await Runner.announce(test.arguments)
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.stdout.isEmpty, "\(outcome)")
        #expect(outcome.stderrLines == [test.line], "\(outcome)")
    }

    @Test(
        "durations in every documented form are accepted",
        arguments: ["90", "1.5s", "500ms", "1m30s", "1h2m3s", "0:24.9", "1:02:03"])
    func durations(_ text: String) async throws {
        let tag = "dur-\(UUID().uuidString.prefix(8))"
        let outcome = try await Runner.announce([
            "play", "-q", "--no-wait", "--delay", text, "--expire", text, "--tag", tag, "-d", "null",
            try Harness.fixture("wav16-stereo.wav")
        ])
        #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
        _ = try await Runner.announce(["cancel", "--tag", tag])
    }

    @Test("play --no-wait -q prints nothing at all (cron mails any output); without -q, the id")
    func noWaitQuiet() async throws {
        let file = try Harness.fixture("wav16-stereo.wav")
        let quiet = try await Runner.announce(["play", "--no-wait", "-q", "-d", "null", file])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet)")
        // What --json asks for explicitly is printed even with -q.
        let json = try await Runner.announce(["play", "--no-wait", "--json", "-q", "-d", "null", file])
        #expect(json.status == 0 && json.stdout.hasPrefix(#"{"ids":["#) && json.stderr.isEmpty, "\(json)")
        let loud = try await Runner.announce(["play", "--no-wait", "-d", "null", file])
        #expect(loud.status == 0 && loud.stdout.wholeMatch(of: /[0-9a-f]{12}\n/) != nil, "\(loud)")
    }

    @Test(
        "-q on every subcommand: no output, exit as without it",
        arguments: [
            ["status"], ["queue"], ["quiet"], ["devices"], ["skip"], ["pause"], ["resume"], ["clear"],
            ["cancel", "--tag", "none-such"],
            ["info", "FIXTURE"]
        ])
    func quietEverywhere(_ arguments: [String]) async throws {
        // no daemon: skip, pause … must not touch the shared one
        let runtime = try JSONOutputTests.freshRuntimeDirectory()
        let args = try arguments.map { $0 == "FIXTURE" ? try Harness.fixture("wav16-stereo.wav") : $0 }
        let quiet = try await Runner.announce(args + ["-q"], environment: ["ANNOUNCE_RUNTIME_DIR": runtime])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet)")
    }

    @Test("-q keeps errors: info -q on a missing file is 66 with its line")
    func quietKeepsErrors() async throws {
        let missing = try Harness.fixture("bad/does-not-exist.wav")
        let outcome = try await Runner.announce(["info", "-q", missing])
        BadInputTests.expectOneError(outcome, status: 66, naming: "\(missing): ")
    }

    @Test("cancel takes a unique id prefix; an ambiguous one is 64 naming the candidates; an unknown one 75")
    func cancelByPrefix() async throws {
        let file = try Harness.fixture("wav16-stereo.wav")
        let tag = "prefix-\(UUID().uuidString.prefix(8))"
        // 17 ids of 16 possible first digits: two must share one.
        let queued = try await Runner.announce(
            ["play", "--no-wait", "--delay", "1h", "--tag", tag, "-d", "null"]
                + Array(repeating: file, count: 17))
        #expect(queued.status == 0, "\(queued)")
        let ids = queued.stdout.split(separator: "\n").map(String.init)
        #expect(ids.count == 17)

        let firstDigits = Dictionary(grouping: ids) { $0.prefix(1) }
        let shared = try #require(firstDigits.first { $0.value.count > 1 })
        let ambiguous = try await Runner.announce(["cancel", String(shared.key)])
        #expect(ambiguous.status == 64, "\(ambiguous)")
        #expect(ambiguous.stderrLines.count == 1, "\(ambiguous)")
        for id in shared.value { #expect(ambiguous.stderr.contains(id), "the candidates are named: \(ambiguous)") }

        // A prefix long enough to be unique among them (and, with 48 random bits, among any other test's).
        let target = ids[0]
        let unique = try await Runner.announce(["cancel", String(target.prefix(9))])
        #expect(unique.status == 0 && unique.stderr.isEmpty, "\(unique)")
        let status = try await Runner.announce(["queue", "--json"])
        #expect(!status.stdout.contains(target), "the item named by its prefix was cancelled")
        #expect(status.stdout.contains(ids[1]), "the others are still scheduled")

        let unknown = try await Runner.announce(["cancel", "fffffffffffg"])
        #expect(unknown.status == 75, "\(unknown)")
        _ = try await Runner.announce(["cancel", "--tag", tag])  // the shared daemon's queue as it was
    }
}
