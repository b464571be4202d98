import Foundation
import Testing

/// Playing audio the client stores in the daemon's media directory (`play -`, `play URL`)
/// and comparing it with the same file played by path.
extension DaemonRuntime {
    /// `announce play ARGUMENTS -d file:CAPTURE` with ANNOUNCE_LOG=debug in this runtime, reading `stdin`.
    func playCapture(
        _ arguments: [String], label: String, stdin: String = "/dev/null",
        environment extra: [String: String?] = [:]
    ) async throws -> Playback {
        let capture = try Harness.capturePath(label)
        let outcome = try await announce(
            ["play"] + arguments + ["-d", Harness.fileDevice(capture)],
            environment: extra.merging(["ANNOUNCE_LOG": "debug"]) { $1 }, stdin: stdin)
        let lines = outcome.stderrLines
        return Playback(
            outcome: outcome, capturePath: capture, debugLines: lines.compactMap(DebugLine.init),
            otherStderrLines: lines.filter { DebugLine($0) == nil },
            capture: FileManager.default.fileExists(atPath: capture) ? try WAVCapture(path: capture) : nil)
    }
}

/// The two captures hold the same samples in the same format, as this suite reads them and as sox does.
func expectSameCapture(
    _ play: Playback, as reference: Playback, _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    try #require(
        play.outcome.status == 0 && reference.outcome.status == 0, "\(what): \(play.outcome) / \(reference.outcome)",
        sourceLocation: sourceLocation)
    #expect(play.otherStderrLines.isEmpty, "\(what): \(play.otherStderrLines)", sourceLocation: sourceLocation)
    let ours = try #require(play.capture, sourceLocation: sourceLocation)
    let theirs = try #require(reference.capture, sourceLocation: sourceLocation)
    #expect(
        ours.channels == theirs.channels && ours.sampleRate == theirs.sampleRate
            && ours.bitsPerSample == theirs.bitsPerSample,
        "\(what): capture formats differ", sourceLocation: sourceLocation)
    #expect(
        !ours.data.isEmpty && ours.data == theirs.data, "\(what): \(ours.data.count) vs \(theirs.data.count) bytes",
        sourceLocation: sourceLocation)
    let soxOurs = try soxRaw(play.capturePath)
    let soxTheirs = try soxRaw(reference.capturePath)
    #expect(
        !soxOurs.isEmpty && soxOurs == soxTheirs, "\(what): sox reads the captures differently",
        sourceLocation: sourceLocation)
}

/// sox's reading of a capture, as raw samples in the capture's own encoding.
private func soxRaw(_ capture: String) throws -> Data {
    let raw = capture + ".sox.raw"
    let sox = try ChildProcess(
        "sox", ["sox", "-V1", capture, "-t", "raw", raw], environment: ProcessInfo.processInfo.environment,
        stdout: "/dev/null", stderr: "/dev/null")
    guard sox.waitForExit(timeout: 30) == 0 else { throw HarnessError("sox could not read \(capture)") }
    return try Data(contentsOf: URL(fileURLWithPath: raw))
}
