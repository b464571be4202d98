import Foundation
import Testing

/// Real sound files nobody here made: the ALSA speaker-test WAVs (alsa-utils) and the
/// freedesktop sound theme's Ogg Vorbis files (sound-theme-freedesktop), both in TEST_PKGS.
/// `info` counts what sox counts; each plays as sox decodes it.
@Suite("Sound files from Debian packages")
struct DebianSoundTests {
    static let directories = ["/usr/share/sounds/alsa", "/usr/share/sounds/freedesktop/stereo"]

    /// Regular files only: the theme's symlinks name the same sounds again.
    static var files: [String] {
        directories.flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted().map {
                directory + "/" + $0
            }
            .filter { path in
                (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular
                    && (path.hasSuffix(".wav") || path.hasSuffix(".oga"))
            }
        }
    }

    /// sox's decode of `path` as raw float32 (Vorbis through libvorbisfile, rounded to 16 bits).
    private func soxDecode(_ path: String, channels: Int) async throws -> PCM {
        let raw = try Harness.capturePath("sox-ref") + ".f32"
        let sox = try await Runner.run("sox", ["-V1", path, "-t", "raw", "-e", "floating-point", "-b", "32", raw])
        try #require(sox.status == 0, "\(sox)")
        return try PCM.reference(raw, channels: channels)
    }

    @Test("the packages' files are there")
    func present() {
        #expect(
            Self.files.count >= 30, "install alsa-utils and sound-theme-freedesktop (make deps-test): \(Self.files)")
    }

    @Test("info: frames as sox counts them; play: sox's decode", arguments: files)
    func file(_ path: String) async throws {
        let info = try await Runner.announce(["info", "--json", path])
        try #require(info.status == 0, "\(info)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        let channels = try #require(object["channels"] as? Int)
        let reference = try await soxDecode(path, channels: channels)
        #expect(object["frames"] as? Int == reference.frames, "frames vs sox")

        let play = try await Playback.run([path], label: "debian-sound")
        guard let output = play.output() else { return }
        // PCM WAVs exactly; Vorbis within half a 16-bit step (sox's libvorbisfile rounds to int16).
        let isVorbis = path.hasSuffix(".oga")
        let expected = isVorbis ? reference.quantised(to: .int32) : reference.quantised(to: .int16)
        expectSamples(output, match: expected, tolerance: isVorbis ? 0.5 / 32768 + 1e-7 : Tolerance.exact, path)
        #expect(play.debugLines.first?.frames == reference.frames)
    }
}
