import AnnounceModel
import AnnounceSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Audio `play` stores in the daemon's media directory before queueing it (DESIGN §2, the
/// media directory): stdin (`-`). The clip names it as the user gave it (`label`: stdin), and
/// the daemon plays `file`. (A URL the daemon downloads itself: `Play.urlClip`.)
struct StoredInput {
    let file: MediaFile
    let label: String

    /// Stdin read into a media file; nil when `argument` is not `-`.
    static func store(_ argument: String) throws(AnnounceError) -> StoredInput? {
        guard argument == Play.stdinArgument else { return nil }
        if isatty(STDIN_FILENO) == 1 {
            throw .usage("\(Clip.stdinLabel): is a terminal; pipe audio into announce play -")
        }
        let file = try mediaDirectory().store(from: STDIN_FILENO, label: Clip.stdinLabel, limit: MediaDirectory.limit)
        return StoredInput(file: file, label: Clip.stdinLabel)
    }

    /// An error checking the stored file, said of the input as the user gave it.
    func explain(_ error: AnnounceError) -> AnnounceError {
        error.naming(file.path, as: label)
    }

    /// The daemon's media directory, in its runtime directory (where it may be started next).
    private static func mediaDirectory() throws(AnnounceError) -> MediaDirectory {
        MediaDirectory(runtime: try RuntimeDirectory.prepare())
    }
}
