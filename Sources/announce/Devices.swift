import AnnounceKit
import ArgumentParser
import FoundationEssentials

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List ALSA playback devices.")

    @Flag(help: "A JSON array of {name, description, holders}; holders lists the processes holding a hardware device {card, device, subdevice, cardID, pid, command}.")
    var json = false

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: false)
        do {
            let devices = try DeviceCatalog.playbackDevices()
            let busy = DeviceHolders.find()
            let holders = devices.map { DeviceHolders.exactHolders(ofDevice: $0.name, among: busy) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let listed = zip(devices, holders).map { ListedDevice(name: $0.name, description: $0.description, holders: $1) }
                print(String(decoding: try encoder.encode(listed), as: UTF8.self))
            } else {
                let width = devices.map(\.name.count).max() ?? 0
                for (device, holders) in zip(devices, holders) {
                    print(device.name + String(repeating: " ", count: width - device.name.count + 2) + device.description)
                    if !holders.isEmpty {
                        print(String(repeating: " ", count: width + 2) + "busy, " + DeviceHolders.describe(holders))
                    }
                }
            }
        } catch let error as AnnounceError {
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
