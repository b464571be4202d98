import Foundation
import Testing

/// Formats announce does not decode are named for what they are, by their bytes (every
/// fixture is named .wav), with exit 65 and nothing played.
@Suite("Unsupported formats are named")
struct UnsupportedFormatTests {
    static let cases: [(file: String, name: String)] = [
        ("aac-mp4", "AAC in MP4"), ("alac-mp4", "ALAC in MP4"), ("aac-adts", "AAC (ADTS)"), ("ac3", "AC-3"),
        ("eac3", "E-AC-3"), ("wma", "WMA/ASF"), ("wavpack", "WavPack"), ("tta", "TTA"), ("webm", "Matroska/WebM"),
        ("speex-ogg", "Speex in Ogg"), ("midi", "MIDI"), ("ape", "Monkey's Audio (APE)"),
        ("musepack", "Musepack"), ("dsf", "DSD (DSF)"), ("dff", "DSD (DSDIFF)"), ("amr", "AMR"),
        ("mod", "MOD tracker module"),
        ("aac-id3", "AAC (ADTS)"), ("mp3-mp4", "MP3 in MP4"), ("tak", "TAK"), ("optimfrog", "OptimFROG"),
        ("s64-wav", "WAV with 64-bit integer samples"), ("moov64-mp4", "AAC in MP4"),
        // CAF as ffmpeg writes it: libsndfile refuses these encodings.
        ("alac-caf", "ALAC in CAF (as ffmpeg writes it)"), ("ima-caf", "IMA ADPCM in CAF"), ("opus-caf", "Opus in CAF")
    ]

    @Test("play and info: exit 65, 'announce: FILE: X is not supported'", arguments: cases.map(\.file))
    func named(_ file: String) async throws {
        let name = try #require(Self.cases.first { $0.file == file }?.name)
        let path = try Harness.fixture("unsupported/\(file).wav")
        let play = try await Playback.run([path], debug: false, label: "unsupported")
        BadInputTests.expectOneError(play.outcome, status: 65, naming: "\(path): ")
        #expect(play.outcome.stderrLines == ["announce: \(path): \(name) is not supported"])
        #expect(play.capturedNothing, "something was played")
        let info = try await Runner.announce(["info", path])
        #expect(info.status == 65 && info.stderrLines == ["announce: \(path): \(name) is not supported"], "\(info)")
    }

    static let nonAudio: [(file: String, reason: String)] = [
        ("elf", "an ELF executable, not audio"), ("pdf", "a PDF document, not audio"),
        ("zip", "a ZIP archive, not audio"),
        ("gzip", "gzip-compressed data, not audio"), ("png", "a PNG image, not audio"),
        ("jpeg", "a JPEG image, not audio"),
        ("utf16-text", "unknown format (text, not audio)"),
        // A program whose header is gone: machine code never passes for MPEG audio after junk.
        ("headless-elf", "unknown format (starts with 00 00 00 00)")
    ]

    @Test("what is not audio is named by its bytes: exit 65, nothing played", arguments: nonAudio.map(\.file))
    func namedNonAudio(_ file: String) async throws {
        let reason = try #require(Self.nonAudio.first { $0.file == file }?.reason)
        let path = try Harness.fixture("notaudio/\(file).wav")
        let play = try await Playback.run([path], debug: false, label: "notaudio")
        BadInputTests.expectOneError(play.outcome, status: 65, naming: "\(path): ")
        #expect(play.outcome.stderrLines == ["announce: \(path): \(reason)"])
        #expect(play.capturedNothing, "something was played")
        let info = try await Runner.announce(["info", path])
        #expect(info.status == 65 && info.stderrLines == ["announce: \(path): \(reason)"], "\(info)")
    }

    @Test("binary data is never called text; text is")
    func textOrNot() async throws {
        let binary = try Harness.fixture("bad/printable-binary.wav")
        let text = try Harness.fixture("bad/text.wav")
        let outcome = try await Runner.announce(["info", binary, text])
        #expect(outcome.status == 65, "\(outcome)")
        #expect(
            outcome.stderrLines == [
                "announce: \(binary): unknown format (starts with 46 4f 52 4d)",
                "announce: \(text): unknown format (text, not audio)"
            ])
    }
}
