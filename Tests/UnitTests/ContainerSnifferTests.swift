import Foundation
import Testing

@testable import AnnounceClient
@testable import AnnounceDaemon
@testable import AnnounceEngine
@testable import AnnounceModel
@testable import AnnounceOutput
@testable import AnnounceSources
@testable import AnnounceSystem

@Suite struct ContainerSnifferTests {
    private func sniff(_ text: String, _ tail: [UInt8] = []) -> SniffedContainer {
        SniffedContainer.sniff(Array(text.utf8) + tail)
    }

    @Test func recognisesContainersByMagicBytes() {
        #expect(sniff("RIFF\u{0}\u{0}\u{0}\u{0}WAVE") == .wav)
        #expect(sniff("RF64\u{0}\u{0}\u{0}\u{0}WAVE") == .rf64)
        #expect(sniff("caff\u{0}\u{1}\u{0}\u{0}") == .caf)
        #expect(sniff("FORM\u{0}\u{0}\u{0}\u{0}AIFF") == .aiff)
        #expect(sniff("FORM\u{0}\u{0}\u{0}\u{0}AIFC") == .aifc)
        #expect(sniff("fLaC\u{0}\u{0}\u{0}\u{22}") == .flac)
        #expect(sniff("OggS\u{0}\u{2}") == .ogg)
        #expect(sniff("ID3\u{4}\u{0}") == .mpeg)
        #expect(sniff("\u{0}\u{0}\u{0}\u{20}ftypM4A ") == .mp4)
    }

    @Test func knowsWhatLibsndfileReads() {
        for header in [
            "RIFX\u{0}\u{0}\u{0}\u{0}WAVE", ".snd", "dns.", "NIST_1A\n", "Creative Voice File\u{1A}",
            " paf", "FORM\u{0}\u{0}\u{0}\u{0}8SVX", "2BIT", "ALawSoundFile**"
        ] {
            #expect(sniff(header) == .sndfile, "\(header)")
        }
        #expect(SniffedContainer.sniff([0x72, 0x69, 0x66, 0x66, 0x2E, 0x91, 0xCF, 0x11]) == .sndfile)  // Wave64
        #expect(SniffedContainer.sniff([0x64, 0xA3, 0x02, 0x00]) == .sndfile)  // IRCAM
    }

    @Test func namesFormatsItDoesNotPlay() {
        #expect(SniffedContainer.sniff([0xFF, 0xF1, 0x50, 0x80]) == .unsupported("AAC (ADTS)"))
        #expect(sniff("MAC \u{0}") == .unsupported("Monkey's Audio (APE)"))
        #expect(sniff("wvpk") == .unsupported("WavPack"))
        #expect(sniff("TTA1") == .unsupported("TTA"))
        #expect(sniff("MPCK") == .unsupported("Musepack"))
        #expect(sniff("MThd\u{0}\u{0}\u{0}\u{6}") == .unsupported("MIDI"))
        #expect(sniff("DSD \u{1C}") == .unsupported("DSD (DSF)"))
        #expect(SniffedContainer.sniff([0x0B, 0x77, 0, 0, 0, 0x40]) == .unsupported("AC-3"))
        #expect(SniffedContainer.sniff([0x0B, 0x77, 0, 0, 0, 0x80]) == .unsupported("E-AC-3"))
        #expect(SniffedContainer.sniff([0x1A, 0x45, 0xDF, 0xA3]) == .unsupported("Matroska/WebM"))
        #expect(SniffedContainer.sniff([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) == .unsupported("WMA/ASF"))
        let speex = Array("OggS".utf8) + [UInt8](repeating: 0, count: 22) + [1, 80] + Array("Speex   ".utf8)
        #expect(SniffedContainer.sniff(speex) == .unsupported("Speex in Ogg"))
        let flac = Array("OggS".utf8) + [UInt8](repeating: 0, count: 22) + [1, 51, 0x7F] + Array("FLAC".utf8)
        #expect(SniffedContainer.sniff(flac) == .oggFLAC)
        let vorbis = Array("OggS".utf8) + [UInt8](repeating: 0, count: 22) + [1, 30, 1] + Array("vorbis".utf8)
        #expect(SniffedContainer.sniff(vorbis) == .ogg)
        var mod = [UInt8](repeating: 0, count: 1084)
        mod.replaceSubrange(1080..<1084, with: Array("M.K.".utf8))
        #expect(SniffedContainer.sniff(mod) == .unsupported("MOD tracker module"))
    }

    @Test func findsMPEGAudioAfterJunk() {
        // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, no padding: 417-byte frames.
        let frame = [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 413)
        let junk = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        let four = frame + frame + frame + frame
        #expect(SniffedContainer.mpegStreamStart(junk + four) == junk.count)
        #expect(SniffedContainer.mpegStreamStart(four) == 0)
        // Three chained frames are not enough; nor are four headers at the wrong distances.
        #expect(SniffedContainer.mpegStreamStart(junk + frame + frame + frame) == nil)
        #expect(SniffedContainer.mpegStreamStart(junk + frame + [0] + frame + frame + frame) == nil)
        // A whole file of fewer frames counts when they end at its end, from its first byte only.
        #expect(SniffedContainer.mpegStreamStart(frame + frame, isWholeFile: true) == 0)
        #expect(SniffedContainer.mpegStreamStart(frame + frame) == nil)
        #expect(SniffedContainer.mpegStreamStart(junk + frame + frame, isWholeFile: true) == nil)
        // The channel count may not change from frame to frame (the last is mono here); stereo
        // and joint stereo may (LAME's Info frame says stereo).
        let stereo = [0xFF, 0xFB, 0x90, 0x04] + [UInt8](repeating: 0, count: 413)
        #expect(SniffedContainer.mpegStreamStart(junk + stereo + frame + frame + frame) == junk.count)
        let mono = [0xFF, 0xFB, 0x90, 0xC4] + [UInt8](repeating: 0, count: 413)
        #expect(SniffedContainer.mpegStreamStart(junk + frame + frame + frame + mono) == nil)
    }

    @Test func takesNoMachineCodeForMPEGAudio() {
        // A jump table as compilers emit it (from /usr/bin/ar): a chain of 32-byte Layer I frames.
        let table =
            [UInt8](repeating: 0x90, count: 100)
            + Array([[UInt8]](repeating: [0xFF, 0xFF, 0x16, 0xDF], count: 512).joined())
        #expect(SniffedContainer.mpegStreamStart(table) == nil)
        // Layer I from the first byte is still MPEG audio: 32 kbit/s at 48 kHz, 32-byte frames.
        let layerI = [0xFF, 0xFF, 0x14, 0xC0] + [UInt8](repeating: 0, count: 28)
        #expect(SniffedContainer.mpegStreamStart(Array([[UInt8]](repeating: layerI, count: 4).joined())) == 0)
    }

    @Test("no program or library on this machine passes for MPEG audio after junk")
    func noBinaryPassesForMPEG() async throws {
        // Seconds of reads on a cold cache: on a thread of its own, not one of the cooperative
        // pool's (two on two cores), which every other test of the run waits for.
        let (checked, passed) = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Self.elfFilesPassingForMPEG()) }.start()
        }
        #expect(checked > 100, "too few ELF files found to mean anything")
        #expect(passed.isEmpty, "\(passed.count) of \(checked) ELF files pass: \(passed.prefix(10))")
    }

    /// How many ELF files there are in the system's folders, and those that pass for MPEG audio.
    private static func elfFilesPassingForMPEG() -> (checked: Int, passed: [String]) {
        let folders = ["/usr/bin", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
        var checked = 0
        var passed: [String] = []
        for folder in folders {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let path = folder + "/" + name
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                    let file = FileHandle(forReadingAtPath: path)
                else { continue }
                let start = [UInt8]((try? file.read(upToCount: 65536)) ?? Data())
                try? file.close()
                // Past the magic number, as if it were damaged: the search itself must refuse.
                guard start.count > 64, start.starts(with: [0x7F, 0x45, 0x4C, 0x46]) else { continue }
                checked += 1
                if SniffedContainer.mpegStreamStart([UInt8](repeating: 0, count: 64) + start.dropFirst(64)) != nil {
                    passed.append(path)
                }
            }
        }
        return (checked, passed)
    }

    @Test func namesWhatIsNotAudio() {
        #expect(
            SniffedContainer.sniff([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 8) + [3, 0])
                == .notAudio("an ELF executable"))
        #expect(sniff("%PDF-1.7\n") == .notAudio("a PDF document"))
        #expect(sniff("PK\u{3}\u{4}") == .notAudio("a ZIP archive"))
        #expect(SniffedContainer.sniff([0x1F, 0x8B, 8, 0]) == .notAudio("gzip-compressed data"))
        #expect(SniffedContainer.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .notAudio("a PNG image"))
        #expect(SniffedContainer.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .notAudio("a JPEG image"))
        // UTF-16 text's byte order mark reads as a Layer I frame header: text first.
        let utf16 = [0xFF, 0xFE] + Array("hello".utf16.map { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }.joined())
        #expect(SniffedContainer.looksLikeText(utf16))
        #expect(SniffedContainer.sniff(utf16) == .unknown)
        #expect(!SniffedContainer.looksLikeText([0xFF, 0xFE, 0x00, 0x00]))
    }

    @Test func callsOnlyTextText() {
        #expect(SniffedContainer.looksLikeText(Array("This is not audio.\nJust text.\n".utf8)))
        #expect(SniffedContainer.looksLikeText(Array("Grüße\r\n".utf8)))
        #expect(!SniffedContainer.looksLikeText(Array("FORM".utf8) + [0, 0, 1, 0] + Array("MAUD".utf8)))
        #expect(!SniffedContainer.looksLikeText([]))
    }

    @Test func acceptsOnlyValidMPEGFrameHeaders() {
        // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz.
        #expect(SniffedContainer.sniff([0xFF, 0xFB, 0x90, 0x64]) == .mpeg)
        // Reserved version, reserved layer, bad bitrate, reserved rate.
        #expect(SniffedContainer.sniff([0xFF, 0xEB, 0x90, 0x64]) == .unknown)
        #expect(SniffedContainer.sniff([0xFF, 0xF9, 0x90, 0x64]) == .unsupported("AAC (ADTS)"))  // layer 0 is ADTS
        #expect(SniffedContainer.sniff([0xFF, 0xFB, 0xF0, 0x64]) == .unknown)
        #expect(SniffedContainer.sniff([0xFF, 0xFB, 0x9C, 0x64]) == .unknown)
    }

    @Test func ignoresWhatOnlyLooksSimilar() {
        #expect(sniff("RIFF\u{0}\u{0}\u{0}\u{0}AVI ") == .unsupported("AVI"))
        #expect(sniff("FORM\u{0}\u{0}\u{0}\u{0}ILBM") == .unknown)
        #expect(sniff("hello, world") == .unknown)
        #expect(SniffedContainer.sniff([]) == .unknown)
    }
}
