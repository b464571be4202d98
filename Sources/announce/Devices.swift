import AnnounceKit
import ArgumentParser
import FoundationEssentials

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List ALSA playback devices.")

    @Flag(help: "A JSON array of {name, description}.")
    var json = false

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: false)
        do {
            let devices = try DeviceCatalog.playbackDevices()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(devices), as: UTF8.self))
            } else {
                let width = devices.map(\.name.count).max() ?? 0
                for device in devices {
                    print(device.name + String(repeating: " ", count: width - device.name.count + 2) + device.description)
                }
            }
        } catch let error as AnnounceError {
            throw reportedExit(error)
        }
    }
}
