import AnnounceModel
import AnnounceSystem
import CPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The sound-server variables a device is opened with. The daemon may have been started by
/// cron (no XDG_RUNTIME_DIR, no PULSE_SERVER), systemd or a terminal; each play request
/// carries its caller's variables, and the device is opened with those, so a later play from
/// a desktop reaches that desktop's sound server whoever started the daemon.
///
/// ALSA's pulse plugin (libpulse: client.conf, PULSE_SERVER, the runtime path) and PipeWire's
/// read them in `snd_pcm_open`, when they connect. glibc's setenv may free the array a
/// concurrent getenv is reading, so the variables are never set: each distinct environment is
/// built once as a complete `environ` array, kept for the life of the process, and `environ`
/// is pointed at it under a lock held across the open, then back at the process's own. Readers
/// elsewhere see the old or the new array, both valid.
public enum AudioEnvironment {
    /// The caller's sound-server variables; nil when it sets none (cron): then the daemon's own apply.
    public static func caller(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> [String:
        String]?
    {
        var found: [String: String] = [:]
        for name in Clip.environmentVariables {
            if let value = environment(name), !value.isEmpty { found[name] = value }
        }
        return found.isEmpty ? nil : found
    }

    /// The user's logind directory, /run/user/UID, when it exists and is the user's own.
    static var userRuntimeDirectory: String? {
        let path = "/run/user/\(getuid())"
        return RuntimeDirectory.isOwnDirectory(path) ? path : nil
    }

    /// The variables a device is opened with for a request carrying `requested`: the request's
    /// own set when it has one (what it leaves out is unset), else the daemon's. Either way
    /// XDG_RUNTIME_DIR defaults to the user's /run/user/UID, where the desktop's server listens.
    static func effective(
        _ requested: [String: String]?, daemon: [String: String],
        userRuntimeDirectory: String?
    ) -> [String: String] {
        var chosen = requested?.filter { Clip.environmentVariables.contains($0.key) } ?? daemon
        if chosen["XDG_RUNTIME_DIR"] == nil, let userRuntimeDirectory {
            chosen["XDG_RUNTIME_DIR"] = userRuntimeDirectory
        }
        return chosen
    }

    private struct State {
        /// The process's environment without `Clip.environmentVariables`, taken at the first open.
        var base: [String] = []
        /// The daemon's own values of them, from the same moment.
        var daemon: [String: String] = [:]
        var captured = false
        /// The process's own array, put back after each open: other threads (quiet hours' tzset,
        /// decoders) then see the daemon's environment, not the last caller's.
        var own: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        /// One array per distinct environment, never freed (readers may still hold one).
        var arrays: [[String: String]: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>] = [:]
    }
    private static let state = Mutex(State())

    /// Runs `open` with the process environment holding `requested`'s variables (see `effective`);
    /// opens are serialised, so two never see each other's variables.
    public static func whileApplied<Result>(
        _ requested: [String: String]?,
        _ open: () throws(AnnounceError) -> Result
    ) throws(AnnounceError) -> Result {
        try state.withLock { state throws(AnnounceError) -> Result in
            if !state.captured { capture(into: &state) }
            let chosen = effective(requested, daemon: state.daemon, userRuntimeDirectory: userRuntimeDirectory)
            let array: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
            if let built = state.arrays[chosen] {
                array = built
            } else {
                let entries = state.base + chosen.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                array = .allocate(capacity: entries.count + 1)
                for (index, entry) in entries.enumerated() { array[index] = strdup(entry) }
                array[entries.count] = nil
                state.arrays[chosen] = array
            }
            announce_set_environ(array)
            defer { announce_set_environ(state.own) }
            return try LibraryNoise.captured(open)
        }
    }

    private static func capture(into state: inout State) {
        state.captured = true
        // Opening JACK's PCM must not start a JACK server (jackd's autostart) as a side effect.
        if getenv("JACK_NO_START_SERVER") == nil { state.base.append("JACK_NO_START_SERVER=1") }
        ALSAOutput.processEnvironment  // its variables belong to every environment
        state.own = environ
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            let name = String(text.prefix { $0 != "=" })
            if Clip.environmentVariables.contains(name) {
                state.daemon[name] = String(text.dropFirst(name.count + 1))
            } else {
                state.base.append(text)
            }
            cursor += 1
        }
    }
}
