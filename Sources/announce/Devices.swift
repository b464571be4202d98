import AnnounceClient
import AnnounceModel
import AnnounceOutput
import AnnounceSystem
import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration.subcommand(
        "devices", abstract: "List ALSA playback devices; those that cannot open here are marked.")

    @Flag(
        help:
            "One JSON object {v, devices}: each device {name, description, holders, problem}; holders lists the processes holding a hardware device {card, device, subdevice, cardID, pid, command}; problem says why it cannot open here, absent when it can (docs/json.md)."
    )
    var json = false

    @OptionGroup var verbosity: QuietFlag

    func run() throws {
        _ = CLILogHandler.bootstrap(quiet: verbosity.quiet)
        do {
            let devices = try withoutStderr { () throws(AnnounceError) in try Outputs.backend.devices(probing: true) }
            let holders = Outputs.backend.holders(of: devices.map(\.name))
            if json {
                let listed = zip(devices, holders).map {
                    ListedDevice(name: $0.name, description: $0.description, holders: $1, problem: $0.problem)
                }
                print(jsonLine(Versioned(["devices": listed])))
            } else {
                let width = devices.map(\.name.rawValue.count).max() ?? 0
                for (device, holders) in zip(devices, holders) {
                    output(
                        device.name.rawValue + String(repeating: " ", count: width - device.name.rawValue.count + 2)
                            + device.description)
                    if let problem = device.problem {
                        output(String(repeating: " ", count: width + 2) + "cannot open here: " + problem)
                    }
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
    var name: DeviceName
    var description: String
    var holders: [DeviceHolder]
    var problem: String?
}

/// Runs `body` with stderr on /dev/null: opening JACK's or OSS's PCM to see whether it works
/// prints their libraries' complaints straight to stderr.
private func withoutStderr<Result>(_ body: () throws(AnnounceError) -> Result) throws(AnnounceError) -> Result {
    let saved = dup(STDERR_FILENO)
    let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
    if saved >= 0 && null >= 0 { dup2(null, STDERR_FILENO) }
    defer {
        if saved >= 0 {
            dup2(saved, STDERR_FILENO)
            close(saved)
        }
        if null >= 0 { close(null) }
    }
    setenv("JACK_NO_START_SERVER", "1", 0)  // probing must not start a JACK server
    return try body()
}
