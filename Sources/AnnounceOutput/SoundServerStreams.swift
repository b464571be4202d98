import CPulse
import AnnounceModel

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
            announce_pulse_connect(Self.timeoutMilliseconds, &reason, reason.count)
        }
        guard let connected else {
            throw .unavailable(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        pulse = connected
    }

    deinit { announce_pulse_disconnect(pulse) }

    /// Every playback stream on the server, announce's own included.
    public func streams() throws(AnnounceError) -> [OtherStream] {
        let capacity = 256
        var raw = [announce_pulse_stream](repeating: announce_pulse_stream(), count: capacity)
        let count = Int(announce_pulse_list_streams(pulse, &raw, Int32(capacity), Self.timeoutMilliseconds))
        guard count >= 0 else { throw .unavailable("the sound server stopped answering") }
        return raw.prefix(count).map { stream in
            var stream = stream
            let volume = withUnsafeBytes(of: &stream.volume) { Array($0.bindMemory(to: UInt32.self).prefix(Int(stream.channels))) }
            return OtherStream(index: stream.index, volume: volume, settable: stream.has_volume != 0,
                               processID: stream.process_id >= 0 ? stream.process_id : nil,
                               role: Self.text(&stream.role), application: Self.text(&stream.application),
                               corked: stream.corked != 0)
        }
    }

    /// Sets a stream's volume; false when the server refused (the stream is gone).
    @discardableResult
    public func setVolume(_ change: VolumeChange) throws(AnnounceError) -> Bool {
        let result = announce_pulse_set_volume(pulse, change.index, UInt32(change.volume.count), change.volume,
                                               Self.timeoutMilliseconds)
        guard result >= 0 else { throw .unavailable("the sound server stopped answering") }
        return result == 0
    }

    private static func text<Field>(_ field: inout Field) -> String {
        withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
