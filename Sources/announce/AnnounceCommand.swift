import AnnounceClient
import AnnounceModel
import AnnounceSystem
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

@main
struct AnnounceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "announce",
        abstract: "Play announcements on Linux: priorities, honest exit codes, kind to scripts.",
        discussion: """
            EXIT STATUS
              0   played to the end (or the command succeeded)
              64  usage error (unknown command or option, value out of range)
              65  input is not decodable audio / corrupt, or a format announce does not
                  play (AAC, WMA, ...: named); alert: not PCM WAV/CAF/AIFF, or longer
                  than \(Int(SystemSound.maxSeconds)) s
              66  input cannot be opened (missing, permission, directory)
              69  audio device unavailable (unknown or cannot open: refused when the item
                  is accepted; busy with --if-busy fail; refused the format), or the
                  daemon cannot run, cannot store the request (disk full) or does not
                  answer (stopped; ANNOUNCE_TIMEOUT); with --zone/--host, a host
                  that gave no answer within --wait-timeout
              70  internal error
              75  not played to the end: dropped, cancelled (skip, stop, clear,
                  cancel), replaced, expired, silenced by quiet mode or
                  --if-other-audio skip; for cancel, an id that was unknown or
                  already final
              77  not permitted on the system queue: not in group announce, another
                  user's item, a control for root, a path or device only you can open
              128+N  play got signal N while waiting (Ctrl-C: 130; also SIGTERM,
                     SIGHUP); the items it queued were cancelled

            WHICH QUEUE
              --system (ANNOUNCE_SYSTEM=1) before the command uses the machine's one queue
              (announce daemon --system), --user (ANNOUNCE_SYSTEM=0) your own. Without
              either, root and system accounts (uid below 1000, or no /run/user/UID) use
              the machine's when it runs, everyone else their own. Only root and group
              announce may use it: others get 77 (--user keeps to your own).

            EXAMPLES
              announce play backup-done.mp3
              announce play chime.wav attention.wav --device plughw:0 --volume 0.5
              announce play --category ambient --duck-others bell.wav  # lowers the others
              announce alert ding.wav   # a system sound: at once, over everything
              announce info recording.flac --json
              announce quiet until 07:30   # ambient/solo-ambient items end as silenced
              announce play doorbell.wav --zone downstairs   # every host of a zone ([mqtt])
              # crontab: a chime on the hour; cron mails only a failure, in one line
              0 * * * *  announce play -q chime

            More in announce(1): files, environment, durations; --json fields in docs/json.md.
            """,
        version: AnnounceVersion.current,
        subcommands: [
            Play.self, Say.self, Alert.self, QueueCommand.self, Status.self, Skip.self, Pause.self, Resume.self,
            Stop.self,
            Clear.self, Cancel.self, Quiet.self, Events.self, Info.self, Devices.self, CacheCommand.self, Voices.self,
            Hosts.self,
            DaemonCommand.self
        ]
    )

    /// ArgumentParser's own main, except that usage errors are one line
    /// (`announce: <message>`) like every other error, still exiting 64.
    /// ArgumentParser reports a missing FILE before an unknown option or a bad value
    /// (`info --jsn`, `play --volume -1`): parsed again with a file, those come first.
    private static func problemBeforeMissingFile(_ error: any Error, arguments: [String]) -> any Error {
        guard message(for: error).hasPrefix("Missing expected argument '<file") else { return error }
        do { _ = try parseAsRoot(arguments + ["--", "FILE"]) } catch {
            if exitCode(for: error) == .validationFailure { return error }
        }
        return error
    }

    /// The named subcommand parsed by its own parser. The root's parse builds the subcommand's
    /// whole argument set once more only to ask whether it takes passthrough arguments: a
    /// third of a warm `play`'s instructions. Help, the version and every error go through the
    /// root's parse instead, so that they read as ever (`announce play: ...`).
    private static func parsedDirectly(_ arguments: [String]) -> (any ParsableCommand)? {
        guard let name = arguments.first,
            let type = configuration.subcommands.first(where: { $0._commandName == name })
        else { return nil }
        let rest = Array(arguments.dropFirst())
        if rest.contains(where: { $0 == "-h" || $0 == "--help" || $0 == "--version" || $0.hasPrefix("--experimental") })
        {
            return nil
        }
        return try? type.parseAsRoot(rest)
    }

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        GlobalFlags.take(&arguments)
        if let problem = UsageErrors.check(arguments) {
            printError(problem)
            Glibc.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parsedDirectly(arguments) ?? parseAsRoot(arguments)
            try command.run()
        } catch let code as ExitCode {
            // Already reported. What exit(withError:) does for an ExitCode, without first
            // rendering a usage message it would not print.
            Glibc.exit(code.rawValue)
        } catch {
            let status = exitCode(for: error)
            guard status == .validationFailure else { Self.exit(withError: error) }  // help, version
            printError(
                UsageErrors.line(
                    for: message(for: problemBeforeMissingFile(error, arguments: arguments)), arguments: arguments))
            Self.exit(withError: status)
        }
    }
}

extension CommandConfiguration {
    /// A subcommand's configuration, `announce` its super command: parsed as a root
    /// (`AnnounceCommand.parsedDirectly`), ArgumentParser then leaves out its look for
    /// `--generate-completion-script` (two throwaway parsers: 0.8 M of a warm `alert`'s 13.6 M
    /// instructions), which the root's parse still answers.
    static func subcommand(_ name: String, abstract: String, discussion: String = "") -> CommandConfiguration {
        CommandConfiguration(
            commandName: name, _superCommandName: "announce", abstract: abstract, discussion: discussion)
    }
}

/// `announce --system CMD` and `announce --user CMD`: which queue (DESIGN §8), given before the
/// command, for clients as `ANNOUNCE_SYSTEM` (RuntimeDirectory.clientTarget), for `daemon` as its `--system`.
enum GlobalFlags {
    nonisolated(unsafe) static var system: Bool?

    /// Takes a leading `--system` or `--user` out of `arguments`.
    static func take(_ arguments: inout [String]) {
        guard let first = arguments.first, first == "--system" || first == "--user" else { return }
        arguments.removeFirst()
        system = first == "--system"
        setenv("ANNOUNCE_SYSTEM", first == "--system" ? "1" : "0", 1)
    }
}
