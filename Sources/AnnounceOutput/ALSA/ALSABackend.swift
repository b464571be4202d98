import AnnounceModel

/// ALSA as an `OutputBackend`: its PCMs (`ALSAOutput`), its configuration's devices
/// (`DeviceCatalog`), its checks (`DeviceProbe`) and the processes on its hardware (`DeviceHolders`).
struct ALSABackend: OutputBackend {
    func open(_ device: DeviceName, request: OutputRequest) throws(AnnounceError) -> any AudioOutput {
        try ALSAOutput(device: device, request: request)
    }

    func probe(_ device: DeviceName, environment: [String: String]?) throws(AnnounceError) {
        try DeviceProbe.check(device, environment: environment)
    }

    func devices(probing: Bool) throws(AnnounceError) -> [PlaybackDevice] {
        try DeviceCatalog.playbackDevices(probing: probing)
    }

    func holders(of devices: [DeviceName]) -> [[DeviceHolder]] {
        let busy = DeviceHolders.find()
        return devices.map { DeviceHolders.exactHolders(ofDevice: $0, among: busy) }
    }

    func resolvingFile(_ device: DeviceName, absolute: (String) -> String) throws(AnnounceError) -> DeviceName {
        try DeviceProbe.resolvingFile(device, absolute: absolute)
    }
}
