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
    }

    @Test func acceptsOnlyValidMPEGFrameHeaders() {
        // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz.
        #expect(SniffedContainer.sniff([0xFF, 0xFB, 0x90, 0x64]) == .mpeg)
        // Reserved version, reserved layer, bad bitrate, reserved rate.
        #expect(SniffedContainer.sniff([0xFF, 0xEB, 0x90, 0x64]) == .unknown)
        #expect(SniffedContainer.sniff([0xFF, 0xF9, 0x90, 0x64]) == .unknown)
        #expect(SniffedContainer.sniff([0xFF, 0xFB, 0xF0, 0x64]) == .unknown)
        #expect(SniffedContainer.sniff([0xFF, 0xFB, 0x9C, 0x64]) == .unknown)
    }

    @Test func ignoresWhatOnlyLooksSimilar() {
        #expect(sniff("RIFF\u{0}\u{0}\u{0}\u{0}AVI ") == .unknown)
        #expect(sniff("FORM\u{0}\u{0}\u{0}\u{0}ILBM") == .unknown)
        #expect(sniff("hello, world") == .unknown)
        #expect(SniffedContainer.sniff([]) == .unknown)
    }
}
