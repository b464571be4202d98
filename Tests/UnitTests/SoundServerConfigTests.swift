import FoundationEssentials
import Testing

@testable import AnnounceOutput

/// A PulseAudio named only in the system's client.conf (a network server) is a server to duck
/// and watch; the stock file, all comments, is not.
@Suite("SoundServerStreams: a server named by the system's client.conf")
final class SoundServerConfigTests {
    /// This test's files, removed after it.
    private let root = FileManager.default.temporaryDirectory.appendingPathComponent(
        "pulse-conf-\(UInt64.random(in: 0...UInt64.max))"
    ).path

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// A client.conf with `text` (and a `.d` directory with `dropIn`) in a fresh directory.
    private func clientConfig(_ text: String, dropIn: String? = nil) throws -> String {
        let directory = root + "/\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory + "/client.conf.d", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/client.conf"))
        if let dropIn {
            try Data(dropIn.utf8).write(to: URL(fileURLWithPath: directory + "/client.conf.d/50-network.conf"))
        }
        return directory + "/client.conf"
    }

    @Test("the stock file's commented settings name no server")
    func stock() throws {
        let path = try clientConfig(
            """
            # This file is part of PulseAudio.
            ; default-sink =
            ; default-server =
            # default-server = tcp:10.0.0.2
            autospawn = no
            default-server-extra = x
            default-server =
            default-server = # tcp:10.0.0.3
            default-server = ;
            """)
        #expect(!SoundServerStreams.namesServer(clientConfig: path))
    }

    @Test("a default-server line names one, with or without spaces around '='")
    func named() throws {
        #expect(
            SoundServerStreams.namesServer(
                clientConfig: try clientConfig("autospawn = no\n  default-server = tcp:127.0.0.1:4713\n")))
        #expect(SoundServerStreams.namesServer(clientConfig: try clientConfig("default-server=unix:/run/pulse/native")))
    }

    @Test(
        "a .conf file in client.conf.d names one; other files there, or the directory without its client.conf, do not")
    func dropIn() throws {
        #expect(
            SoundServerStreams.namesServer(
                clientConfig: try clientConfig("; stock\n", dropIn: "default-server = tcp:speaker.local\n")))
        let path = try clientConfig("; stock\n")
        try Data("default-server = tcp:x\n".utf8).write(to: URL(fileURLWithPath: path + ".d/README"))
        #expect(!SoundServerStreams.namesServer(clientConfig: path))
        // libpulse reads the .d directory only after the file itself.
        let orphan = try clientConfig("", dropIn: "default-server = tcp:speaker.local\n")
        try FileManager.default.removeItem(atPath: orphan)
        #expect(!SoundServerStreams.namesServer(clientConfig: orphan))
    }

    @Test("a missing file names none")
    func missing() {
        #expect(!SoundServerStreams.namesServer(clientConfig: "/nonexistent/pulse/client.conf"))
    }
}
