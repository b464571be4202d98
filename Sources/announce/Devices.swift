import AnnounceKit
import ArgumentParser
import FoundationEssentials

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List ALSA playback devices.")

    @Flag(help: "One JSON object {v, devices}: each device {name, description, holders}; holders lists the processes holding a hardware device {card, device, subdevice, cardID, pid, command} (docs/json.md).")
    var json = false

    @OptionGroup var verbosity: QuietFlag

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        do {
            let devices = try DeviceCatalog.playbackDevices()
            let busy = DeviceHolders.find()
            let holders = devices.map { DeviceHolders.exactHolders(ofDevice: $0.name, among: busy) }
            if json {
                let listed = zip(devices, holders).map { ListedDevice(name: $0.name, description: $0.description, holders: $1) }
                print(jsonLine(Versioned(["devices": listed])))
            } else {
                let width = devices.map(\.name.count).max() ?? 0
                for (device, holders) in zip(devices, holders) {
                    output(device.name + String(repeating: " ", count: width - device.name.count + 2) + device.description)
                    if !holders.isEmpty {
                        output(String(repeating: " ", count: width + 2) + "busy, " + DeviceHolders.describe(holders))
                    }
                }
            }
        } catch {  // typed: AnnounceError
            throw reportedExit(error)
        }
    }
}

/// A device as `announce devices --json` prints it: the catalog's keys plus who holds it.
private struct ListedDevice: Encodable {
    var name: String
    var description: String
    var holders: [DeviceHolder]
}
