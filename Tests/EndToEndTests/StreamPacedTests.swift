import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Live streams (`play --stream`) as heard on the real-time paced device of
/// Tests/Shell/paced-audio.sh, against a live radio of Tests/Servers/icy.py paced in real time:
/// a preempting announcement that the stream rejoins live, and an ambient stream that mixes
/// under an announcement and is ducked. Wall time passes here as it does for a listener, which
/// the unpaced file device of StreamTests cannot show. Tones are multiples of 40 Hz, so the 25 ms
/// Goertzel windows of SessionPacedTests tell them apart while both sound.
@Suite(
    "Paced device: live streams as heard", .serialized, PacedAudioTrait(name: "paced-stream"), .timeLimit(.minutes(3)))
struct StreamPacedTests {
    static let rate = Double(PacedAudio.rate)
    static let window = 1200
    static let hop = 48
    /// The radio's MP3 bytes a second (128 kbit/s): the server is live at this pace.
    static let bytesPerSecond = 16000.0
    static let radioTone = 640.0, announcementTone = 880.0

    /// A radio of a steady 640 Hz tone, live, and a 1 s announcement at 880 Hz.
    private func setUp(_ session: PacedSession) async throws -> (IcyTestServer, announcement: String) {
        try await session.start(environment: URLTests.direct)
        let radio = session.directory + "/radio-640.mp3"
        try await makeStreamClip(radio, from: Self.radioTone, seconds: 4, rate: PacedAudio.rate)
        let announcement = session.directory + "/announcement-880.wav"
        try Sox.tone(announcement, frequency: Self.announcementTone, seconds: 1, rate: PacedAudio.rate, channels: 2)
        let server = try IcyTestServer(serving: radio, options: ["--rate", "\(Int(Self.bytesPerSecond))", "--live"])
        return (server, announcement)
    }

    private func envelope(_ samples: [Double], _ frequency: Double) -> [Double] {
        ToneAnalysis.envelope(samples, frequency: frequency, rate: Self.rate, window: Self.window, hop: Self.hop)
    }

    /// The envelope's median between two times (seconds into the recording).
    private func level(_ envelope: [Double], from start: Double, to end: Double) -> Double {
        let first = max(0, Int(start * Self.rate) / Self.hop)
        let last = min(envelope.count, Int(end * Self.rate) / Self.hop)
        guard last > first else { return 0 }
        let values = envelope[first..<last].sorted()
        return values[values.count / 2]
    }

    @Test(
        "a preempting announcement: the stream stops for it and rejoins live on a new connection; what went by meanwhile is not replayed"
    )
    func preemptedStreamRejoinsLive() async throws {
        try await withPacedSession("stream-rejoin") { session in
            let (server, announcement) = try await setUp(session)
            defer { server.stop() }
            let url = server.url()
            try session.startRecording()
            let radio = session.launch(["play", "--stream", url, "--duration", "3s"])
            let started = try await session.waitForEvent("the stream's start") {
                $0.event == "started" && $0.path == url
            }
            // A quarter of its --duration heard: the radio alone is on the recording first.
            _ = try await session.waitForEvent("the stream's 25% mark") {
                $0.event == "progress" && $0.id == started.id
            }
            let preempting = try await session.announce(["play", "--priority", "high", announcement])
            #expect(preempting.status == 0, "\(preempting)")
            let outcome = try await radio.value
            #expect(outcome.status == 0, "\(outcome)")
            let samples = try await session.stopRecording()

            let interrupted = try #require(session.event("interruption-began", path: url), "\(session.allEvents())")
            let connections = try await server.connections(atLeast: 2)
            #expect(connections.count == 2, "\(connections)")
            // The station went on while the announcement played: the new connection starts where
            // it is now, past what was heard by at least the announcement's second.
            let stationMoved = Double(connections[1].offset - connections[0].offset) / Self.bytesPerSecond
            let heard = interrupted.heard ?? 0
            #expect(
                stationMoved - heard >= 0.9,
                "heard \(heard) s before the announcement; the station moved \(stationMoved) s")
            let finished = session.allEvents().last { $0.event == "finished" && $0.path == url }
            #expect(finished?.outcome?.kind == "played" && finished?.heard == 3, "\(String(describing: finished))")
            // Heard: the radio, the announcement alone, the radio again.
            let segments = PacedAnalysis.segments(samples, tones: [Self.radioTone, Self.announcementTone], minimum: 20)
            #expect(segments.map(\.tone) == [Self.radioTone, Self.announcementTone, Self.radioTone], "\(segments)")
        }
    }

    @Test(
        "an ambient stream mixes under an announcement with --duck-others, lowered by the duck level while it plays, then back"
    )
    func ambientStreamIsDucked() async throws {
        try await withPacedSession("stream-duck") { session in
            let (server, announcement) = try await setUp(session)
            defer { server.stop() }
            let url = server.url()
            try session.startRecording()
            let radio = session.launch(["play", "--stream", url, "--duration", "4s", "--category", "ambient"])
            let started = try await session.waitForEvent("the stream's start") {
                $0.event == "started" && $0.path == url
            }
            // A quarter of its --duration heard: the radio alone is on the recording first.
            _ = try await session.waitForEvent("the stream's 25% mark") {
                $0.event == "progress" && $0.id == started.id
            }
            let ducking = try await session.announce(["play", "--duck-others", "--duck-level", "-20dB", announcement])
            #expect(ducking.status == 0, "\(ducking)")
            let outcome = try await radio.value
            #expect(outcome.status == 0, "\(outcome)")
            let samples = try await session.stopRecording()
            #expect(
                session.allEvents().filter { $0.event == "interruption-began" && $0.path == url }.isEmpty,
                "a mixing stream is not interrupted")
            #expect(try await server.connections(atLeast: 1).count == 1)

            let announced = envelope(samples, Self.announcementTone)
            let spans = ToneAnalysis.spans(
                announced, level: ToneAnalysis.plateau(announced), rate: Self.rate, window: Self.window, hop: Self.hop)
            let span = try #require(spans.count == 1 ? spans.first : nil, "the announcement sounds once: \(spans)")
            let radioLevel = envelope(samples, Self.radioTone)
            let before = level(radioLevel, from: span.lowerBound - 0.6, to: span.lowerBound - 0.1)
            // The ramps: 150 ms down, 400 ms up.
            let during = level(radioLevel, from: span.lowerBound + 0.25, to: span.upperBound - 0.05)
            let after = level(radioLevel, from: span.upperBound + 0.5, to: span.upperBound + 0.9)
            let ducked = 20 * log10(during / before)
            #expect(
                abs(ducked + 20) < 1.5,
                "the stream was lowered by \(ducked) dB, not 20 (before \(before), during \(during))")
            #expect(abs(20 * log10(after / before)) < 1, "the stream came back to \(after), not \(before)")
        }
    }
}
