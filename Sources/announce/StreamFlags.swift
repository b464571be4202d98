import AnnounceModel
import AnnounceOutput
import ArgumentParser

/// `play --stream`, `--duration`, `--persist`: live streams (DESIGN §4, Live streams). The
/// client only checks the options and sends the URL; the daemon connects when the item plays.
struct StreamFlags: ParsableArguments {
    @Flag(
        long: "stream",
        help: """
            Play the http(s) URLs as live streams (internet radio): the daemon connects when the item plays, \
            shows the stream's title, reconnects when it drops (for the config file's reconnect-limit, default 1m, \
            then 66) and plays until it is stopped or --duration has passed; `play` waits that long (--no-wait returns \
            at once). An interrupted stream rejoins live. Not resumed after a daemon restart unless --persist.
            """)
    var isOn = false

    @Option(
        duration: "duration",
        help: "With --stream: stop after this much of it has been heard (10s, 5m, 1h30m); the outcome is played.")
    var duration: TimeSpan?

    @Flag(
        long: "persist",
        help:
            "With --stream: a daemon restart resumes the stream (rejoining it live) instead of ending it as cancelled.")
    var persist = false

    /// The daemon's rules for a stream clip (`Clip.streamProblem`), in the options' words.
    func validate(files: [String], playback: PlaybackFlags) throws {
        guard isOn else {
            if duration != nil { throw ValidationError("--duration needs --stream (it ends a live stream)") }
            if persist { throw ValidationError("--persist needs --stream (files and speech are always kept)") }
            return
        }
        for file in files {
            var clip = Clip(path: file, loops: playback.loops, start: playback.start?.seconds, stream: stream(file))
            playback.reshape(&clip)
            if let problem = clip.streamProblem { throw ValidationError(optionText(problem)) }
        }
    }

    /// The clip that asks the daemon to play `url` live, with the command's other options.
    func clip(_ url: String, for command: some QueuingCommand) throws(AnnounceError) -> Clip {
        var clip = try command.itemClip(url, stream: stream(url))
        clip.seconds = duration?.seconds
        clip.proxies = callerProxies()
        return clip
    }

    private func stream(_ url: String) -> LiveStream {
        LiveStream(url: url, seconds: duration?.seconds, persist: persist ? true : nil)
    }
}

/// A stream problem in the options' words (the daemon says it in the request's: `LiveStreamProblem.description`).
func optionText(_ problem: LiveStreamProblem) -> String {
    switch problem {
    case .scheme(let url): "--stream plays http:// and https:// URLs, not \(url)"
    case .url: "--stream needs a URL with a host, of at most \(Limits.maxPathBytes) bytes"
    case .seconds: "--duration must be above 0"
    case .notOneInput: "--stream plays URLs only"
    case .seeks: "a live stream cannot seek: no --loops or --start with --stream"
    case .changesPace: "a live stream comes at its own pace: no --rate or --skip-silence with --stream"
    }
}
