import Testing
@testable import AnnounceKit

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
        for header in ["RIFX\u{0}\u{0}\u{0}\u{0}WAVE", ".snd", "dns.", "NIST_1A\n", "Creative Voice File\u{1A}",
                       " paf", "FORM\u{0}\u{0}\u{0}\u{0}8SVX", "2BIT", "ALawSoundFile**"] {
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
        #expect(SniffedContainer.mpegStreamStart(junk + frame + frame + frame) == junk.count)
        #expect(SniffedContainer.mpegStreamStart(frame + frame + frame) == 0)
        // Two chained frames are not enough; nor are three headers at the wrong distances.
        #expect(SniffedContainer.mpegStreamStart(junk + frame + frame) == nil)
        #expect(SniffedContainer.mpegStreamStart(junk + frame + [0] + frame + frame) == nil)
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
