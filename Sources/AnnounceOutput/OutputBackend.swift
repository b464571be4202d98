import AnnounceModel

/// A kind of output, as MPD's AudioOutputPlugin: how announce opens one of its devices, checks
/// one when an item is accepted, lists them, and names who holds one that is busy. ALSA is
/// the one there is (`ALSA/`); it reaches PulseAudio and PipeWire through their ALSA plugins.
/// A native PipeWire output would be a folder beside it and one C module.
public protocol OutputBackend: Sendable {
    /// Opens `device` for a play as `request` asks.
    func open(_ device: DeviceName, request: OutputRequest) throws(AnnounceError) -> any AudioOutput
    /// Throws what opening `device` would (69), without playing anything; `environment`: the
    /// caller's sound-server variables. Slow ones are bounded by the caller (`BoundedProbe`).
    func probe(_ device: DeviceName, environment: [String: String]?) throws(AnnounceError)
    /// The playback devices there are; `probing`: each opened once, to say which cannot open here.
    func devices(probing: Bool) throws(AnnounceError) -> [PlaybackDevice]
    /// The processes that hold each of `devices` open (busy), in order.
    func holders(of devices: [DeviceName]) -> [[DeviceHolder]]
    /// `device` with a file it names made absolute by `absolute` (the caller's directory): the
    /// daemon's is `/`. A usage error (64) for a name that needs a file and has none.
    func resolvingFile(_ device: DeviceName, absolute: (String) -> String) throws(AnnounceError) -> DeviceName
}

/// The backend announce plays through, for every caller: the engine's default opener, the
/// daemon's device check, `announce devices` and `--device`'s completion.
public enum Outputs {
    public static let backend: any OutputBackend = ALSABackend()
}
