import AnnounceModel
import AnnounceSystem
import CALSA

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a PCM name can be played on here, found out when an item is accepted rather than
/// when it reaches the head of the queue (after it may have preempted what was playing).
public enum DeviceProbe {
    /// Fails with the error opening `device` would give (69), without playing anything.
    /// - A name ALSA's configuration does not define fails without an open.
    /// - ALSA's `file` device is not opened (that would create or truncate its file): its
    ///   FILE's directory must exist and be writable, and FILE must not be a directory.
    /// - Anything else is opened and closed at once, with `environment`'s sound-server
    ///   variables; a device another program holds (EBUSY) passes: waiting for it is
    ///   `--if-busy`'s business.
    public static func check(_ device: DeviceName, environment: [String: String]?) throws(AnnounceError) {
        // Under the lock every open takes: ALSA's configuration is reread by each open too.
        try AudioEnvironment.whileApplied(environment) { () throws(AnnounceError) in
            guard let type = definedType(device) else {
                throw .deviceUnavailable(device: device, reason: "no such device (see announce devices)")
            }
            if type == "file" {
                if let problem = fileProblem(device) { throw .deviceUnavailable(device: device, reason: problem) }
                return
            }
            var handle: OpaquePointer?
            let status = snd_pcm_open(&handle, device.rawValue, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
            if status == 0, let handle { snd_pcm_close(handle) }
            // Thrown under the lock: the reason may come from what the plugin printed (LibraryNoise).
            if status != 0 && -status != EBUSY { throw ALSAOutput.openError(device, status) }
        }
    }

    /// The `type` of the PCM that `device` names (arguments resolved), or nil when the
    /// configuration does not define it or its arguments do not fit.
    static func definedType(_ device: DeviceName) -> String? {
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return nil }
        defer { snd_config_unref(top) }
        var definition: OpaquePointer?
        guard snd_config_search_definition(top, "pcm", device.rawValue, &definition) >= 0, let definition else {
            return nil
        }
        defer { snd_config_delete(definition) }
        var node: OpaquePointer?
        var type: UnsafePointer<CChar>?
        guard snd_config_search(definition, "type", &node) == 0, snd_config_get_string(node, &type) == 0, let type
        else { return nil }
        return String(cString: type)
    }

    /// `file:FILE=rel.wav,FORMAT=wav` (or `file:rel.wav,wav`) with the FILE made absolute by
    /// `absolute` (the caller's directory): the daemon's is `/`. Other names come back as they are.
    /// Throws a usage error (64) for `file:` without a FILE.
    public static func resolvingFile(_ device: DeviceName, absolute: (String) -> String) throws(AnnounceError)
        -> DeviceName
    {
        guard device == "file" || device.rawValue.hasPrefix("file:") else { return device }
        var arguments = device.arguments
        guard let index = DeviceName.fileArgumentIndex(in: arguments), !arguments[index].value.isEmpty else {
            throw .usage("\(device): ALSA's file device needs FILE, e.g. file:FILE=out.wav,FORMAT=wav")
        }
        let path = arguments[index].value
        if path.hasPrefix("/") { return device }
        arguments[index] = (name: "FILE", value: absolute(path))
        return DeviceName(
            "file:" + arguments.map { ($0.name.map { $0 + "=" } ?? "") + quoted($0.value) }.joined(separator: ","))
    }

    /// Why ALSA's file plugin could not write FILE: its directory is missing or not writable, or
    /// it is a directory. The path is not normalised: `sub/../x` needs `sub`, as for the kernel.
    /// A FILE starting with `|` is a command the plugin pipes to: not checked.
    static func fileProblem(_ device: DeviceName) -> String? {
        guard let file = device.fileArgument, !file.hasPrefix("|") else { return nil }
        var status = stat()
        if stat(file, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR { return "\(file) is a directory" }
            return access(file, W_OK) == 0 ? nil : "cannot write \(file): \(String(cString: strerror(errno)))"
        }
        let directory = file.lastIndex(of: "/").map { $0 == file.startIndex ? "/" : String(file[..<$0]) } ?? "."
        if stat(directory, &status) != 0 {
            return "cannot write \(file): \(directory): \(String(cString: strerror(errno)))"
        }
        if status.st_mode & S_IFMT != S_IFDIR { return "cannot write \(file): \(directory) is not a directory" }
        return access(directory, W_OK | X_OK) == 0
            ? nil : "cannot write \(file): \(directory): \(String(cString: strerror(errno)))"
    }

    private static func quoted(_ value: String) -> String {
        value.contains(where: { ",'\" =".contains($0) }) ? "\"" + value + "\"" : value
    }
}
