import AnnounceModel
import AnnounceSystem
import CPulse

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to the sound server an item's device reaches (PulseAudio, or PipeWire through
/// pipewire-pulse), to read and set other applications' stream volumes (DESIGN §3, duckOthers).
/// libpulse is loaded on first use. Not thread-safe: one thread owns a connection. Every call
/// is bounded by `timeoutMilliseconds`.
public final class SoundServerStreams {
    let pulse: OpaquePointer
    public static let timeoutMilliseconds: Int32 = 500

    /// Connects with `environment`'s sound-server variables (`Clip.environment`; nil: the
    /// daemon's), as the item's device would; throws when no server answers (plain ALSA).
    public init(environment: [String: String]?) throws(AnnounceError) {
        var reason = [CChar](repeating: 0, count: 256)
        let connected = try AudioEnvironment.whileApplied(environment) { () throws(AnnounceError) -> OpaquePointer? in
            guard Self.serverMayListen() else {
                throw .unavailable("no sound server (no PULSE_SERVER, no pulse/native socket in the runtime directory)")
            }
            return announce_pulse_connect(Self.timeoutMilliseconds, &reason, reason.count)
        }
        guard let connected else {
            throw .unavailable(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        pulse = connected
    }

    deinit { announce_pulse_disconnect(pulse) }

    /// libpulse's system-wide client configuration, read when the user has none of their own.
    static let systemClientConfig = "/etc/pulse/client.conf"

    /// Whether libpulse could find a server in the environment in force: PULSE_SERVER, a user's
    /// client configuration (which may name one), a native socket where libpulse looks, or a
    /// default-server in the system's configuration (a network server). Without any, libpulse is
    /// neither loaded nor asked: on plain ALSA it and its libraries would cost the daemon ~3 MB,
    /// and each look a connection attempt.
    static func serverMayListen(systemClientConfig: String = systemClientConfig) -> Bool {
        func variable(_ name: String) -> String? {
            getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        if variable("PULSE_SERVER") != nil || variable("PULSE_CLIENTCONFIG") != nil { return true }
        var sockets = ["/run/user/\(getuid())/pulse/native", "/run/pulse/native", "/var/run/pulse/native"]
        if let runtime = variable("PULSE_RUNTIME_PATH") { sockets.append(runtime + "/native") }
        if let runtime = variable("XDG_RUNTIME_DIR") { sockets.append(runtime + "/pulse/native") }
        let home = variable("HOME") ?? ""
        let configs = [
            (variable("XDG_CONFIG_HOME") ?? home + "/.config") + "/pulse/client.conf", home + "/.pulse/client.conf"
        ]
        if (sockets + configs).contains(where: { access($0, F_OK) == 0 }) { return true }
        return namesServer(clientConfig: systemClientConfig)
    }

    /// Whether a client.conf, or a `.conf` file of its `.d` directory (read as libpulse does: only
    /// when the file itself is there), sets default-server. The system's file exists wherever
    /// libpulse does, usually all comments: only a setting with a value counts.
    static func namesServer(clientConfig path: String) -> Bool {
        guard let main = readWholeFile(path, limit: 1 << 16) else { return false }
        let dropIns = directoryEntries(path + ".d").filter { $0.hasSuffix(".conf") }.sorted().compactMap {
            readWholeFile(path + ".d/" + $0, limit: 1 << 16)
        }
        return ([main] + dropIns).contains { bytes in
            String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).contains { line in
                let setting = line.prefix { $0 != "#" && $0 != ";" }  // a comment runs to the line's end
                    .drop { $0 == " " || $0 == "\t" }
                guard setting.hasPrefix("default-server") else { return false }
                let rest = setting.dropFirst("default-server".count).drop { $0 == " " || $0 == "\t" }
                return rest.first == "=" && rest.dropFirst().contains { $0 != " " && $0 != "\t" }
            }
        }
    }

    /// Every playback stream on the server, announce's own included.
    public func streams() throws(AnnounceError) -> [OtherStream] {
        let capacity = 256
        var raw = [announce_pulse_stream](repeating: announce_pulse_stream(), count: capacity)
        let count = Int(announce_pulse_list_streams(pulse, &raw, Int32(capacity), Self.timeoutMilliseconds))
        guard count >= 0 else { throw .unavailable("the sound server stopped answering") }
        return raw.prefix(count).map { stream in
            var stream = stream
            let volume = withUnsafeBytes(of: &stream.volume) {
                Array($0.bindMemory(to: UInt32.self).prefix(Int(stream.channels)))
            }
            return OtherStream(
                index: stream.index, volume: volume, settable: stream.has_volume != 0,
                processID: stream.process_id >= 0 ? stream.process_id : nil,
                role: Self.text(&stream.role), application: Self.text(&stream.application),
                corked: stream.corked != 0)
        }
    }

    /// Sets a stream's volume; false when the server refused (the stream is gone).
    @discardableResult
    public func setVolume(_ change: VolumeChange) throws(AnnounceError) -> Bool {
        let result = announce_pulse_set_volume(
            pulse, change.index, UInt32(change.volume.count), change.volume,
            Self.timeoutMilliseconds)
        guard result >= 0 else { throw .unavailable("the sound server stopped answering") }
        return result == 0
    }

    /// Stream `index`'s place in the server's restore database (module-stream-restore, or WirePlumber's
    /// through pipewire-pulse); nil when the stream is gone or the server keeps no such database.
    public func restorePlace(of index: UInt32) throws(AnnounceError) -> StreamRestore? {
        var stream = announce_pulse_restore_entry()
        var saved = announce_pulse_restore_entry()
        var hasSaved: Int32 = 0
        let result = announce_pulse_restore_entry_of(pulse, index, &stream, &saved, &hasSaved, Self.timeoutMilliseconds)
        guard result >= 0 else { throw .unavailable("the sound server stopped answering") }
        guard result == 0 else { return nil }
        return StreamRestore(stream: Self.entry(&stream), saved: hasSaved != 0 ? Self.entry(&saved) : nil)
    }

    /// Whether the server is PipeWire (through pipewire-pulse) rather than PulseAudio.
    public func isPipeWire() throws(AnnounceError) -> Bool {
        let result = announce_pulse_is_pipewire(pulse, Self.timeoutMilliseconds)
        guard result >= 0 else { throw .unavailable("the sound server stopped answering") }
        return result == 1
    }

    /// Replaces the restore database's entry of `entry.name`; false when the server refused it.
    @discardableResult
    public func writeRestore(_ entry: RestoreEntry) throws(AnnounceError) -> Bool {
        var raw = announce_pulse_restore_entry()
        let limit = MemoryLayout.size(ofValue: raw.volume) / MemoryLayout<UInt32>.size
        guard entry.channelMap.count <= limit, entry.volume.count <= limit else { return false }
        Self.copy(entry.name, into: &raw.name)
        Self.copy(entry.device ?? "", into: &raw.device)
        raw.channels = UInt32(entry.channelMap.count)
        withUnsafeMutableBytes(of: &raw.positions) { bytes in
            for (channel, position) in entry.channelMap.enumerated() {
                bytes.storeBytes(of: position, toByteOffset: channel * 4, as: Int32.self)
            }
        }
        raw.volume_channels = UInt32(entry.volume.count)
        withUnsafeMutableBytes(of: &raw.volume) { bytes in
            for (channel, volume) in entry.volume.enumerated() {
                bytes.storeBytes(of: volume, toByteOffset: channel * 4, as: UInt32.self)
            }
        }
        raw.muted = entry.muted ? 1 : 0
        let result = announce_pulse_restore_write(pulse, &raw, Self.timeoutMilliseconds)
        guard result >= 0 else { throw .unavailable("the sound server stopped answering") }
        return result == 0
    }

    private static func entry(_ raw: inout announce_pulse_restore_entry) -> RestoreEntry {
        let channels = Int(raw.channels)
        let volumes = Int(raw.volume_channels)
        let map = withUnsafeBytes(of: &raw.positions) { Array($0.bindMemory(to: Int32.self).prefix(channels)) }
        let volume = withUnsafeBytes(of: &raw.volume) { Array($0.bindMemory(to: UInt32.self).prefix(volumes)) }
        let device = text(&raw.device)
        return RestoreEntry(
            name: text(&raw.name), channelMap: map, volume: volume, device: device.isEmpty ? nil : device,
            muted: raw.muted != 0)
    }

    /// `text` NUL-terminated into a C char array, cut to fit.
    private static func copy<Field>(_ text: String, into field: inout Field) {
        withUnsafeMutableBytes(of: &field) { bytes in
            let utf8 = Array(text.utf8.prefix(bytes.count - 1))
            bytes.copyBytes(from: utf8)
            bytes[utf8.count] = 0
        }
    }

    private static func text<Field>(_ field: inout Field) -> String {
        withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
