import Foundation
import Testing

@testable import AnnounceModel
@testable import AnnounceSources

#if canImport(Glibc)
    import Glibc
#endif

/// File names are bytes on Linux: a name that is not UTF-8 (Latin-1 `caf\xe9.wav`) is carried
/// by its bytes (`clip.pathBytes`, base64) and shown lossily (`clip.path`).
@Suite struct FileNameTests {
    static let latin1 = FileName(bytes: Array("/tmp/caf".utf8) + [0xE9] + Array(".wav".utf8))

    @Test func aNameIsShownWithEachBadByteReplacedAndMadeAbsoluteAsBytes() {
        #expect(Self.latin1.text == "/tmp/caf\u{FFFD}.wav")
        #expect(!Self.latin1.isUTF8 && FileName("/tmp/café.wav").isUTF8)
        let name = FileName(bytes: [0x78, 0xFF])
        #expect(name.absolute(against: FileName("/home/u")).bytes == Array("/home/u/x".utf8) + [0xFF])
        #expect(name.absolute(against: FileName("/")).bytes == Array("/x".utf8) + [0xFF])
        #expect(
            FileName(bytes: Array("./x".utf8) + [0xFF]).absolute(against: FileName("/d")).bytes == Array("/d/x".utf8)
                + [0xFF])
        #expect(Self.latin1.absolute(against: FileName("/elsewhere")) == Self.latin1)
    }

    /// Setting a clip's file sets both fields by one rule: bytes only when they are not UTF-8,
    /// so every other request is the line it always was.
    @Test func pathBytesGoOnlyWithANameThatIsNotUTF8() throws {
        var clip = Clip(path: "/old.wav")
        clip.file = FileName("/tmp/café.wav")
        #expect(clip.path == "/tmp/café.wav" && clip.pathBytes == nil)
        clip.file = Self.latin1
        #expect(clip.path == "/tmp/caf\u{FFFD}.wav" && clip.pathBytes == Self.latin1 && clip.file == Self.latin1)
        // base64 of the bytes, as Python's base64.b64encode(b'/tmp/caf\xe9.wav') gives it.
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(JSONCoding.encode(clip) ?? [])) as? NSDictionary)
        #expect(object["pathBytes"] as? String == "L3RtcC9jYWbpLndhdg==")
        #expect(try JSONCoding.decode(Clip.self, from: JSONCoding.encode(clip) ?? []) == clip)
        // A clip spooled before the field existed opens its path.
        let old = try JSONCoding.decode(Clip.self, from: Array(#"{"path":"/a.wav","gain":1,"pan":0,"loops":0}"#.utf8))
        #expect(old.pathBytes == nil && old.file == FileName("/a.wav"))
    }

    @Test func theDaemonRefusesPathBytesThatAreNotAnAbsolutePathInOneLine() {
        func problem(_ bytes: [UInt8], speech: Bool = false) -> String? {
            var clip = Clip(path: "/shown.wav", speech: speech ? Speech(text: "hi") : nil)
            clip.pathBytes = FileName(bytes: bytes)
            return ItemRequest(clip: clip).problem?.description
        }
        #expect(problem(Self.latin1.bytes) == nil)
        #expect(problem(Array("caf".utf8) + [0xE9]) == "pathBytes must be an absolute path, not caf\u{FFFD}")
        #expect(problem(Array("/a".utf8) + [0, 0xE9]) == "pathBytes contains a NUL byte")
        #expect(
            problem([0x2F] + [UInt8](repeating: 0xE9, count: Limits.maxPathBytes))
                == "pathBytes is longer than 4096 bytes")
        #expect(problem([0x2F] + [UInt8](repeating: 0xE9, count: Limits.maxPathBytes - 1)) == nil)
        #expect(problem([]) == "pathBytes must be an absolute path, not ")
        #expect(problem(Self.latin1.bytes, speech: true) == "pathBytes is for files, not speech")
        var alert = AlertRequest(path: "/shown.wav")
        alert.pathBytes = FileName(bytes: [0xE9])
        #expect(Request.alert(alert, wait: false).problem == "alert: pathBytes must be an absolute path, not \u{FFFD}")
    }

    @Test func malformedPathBytesOnTheWireNameTheField() {
        let clip = #""path":"/x.wav","gain":1,"pan":0,"loops":0"#
        for (value, reason) in [(#""%%""#, "invalid value"), ("7", "expected String"), (#""L3g=""#, nil)] {
            let line = #"{"v":1,"op":"play","items":[{"clip":{\#(clip),"pathBytes":\#(value)}}]}"#
            do {
                let request = try Request(line: Array(line.utf8))
                #expect(reason == nil, "\(value) was taken: \(request)")
            } catch {
                #expect(error.exitCode == 64)
                #expect(error.description == "malformed request: items[0].clip.pathBytes: \(reason ?? "")", "\(value)")
            }
        }
    }

    /// The decoders open the file by its bytes, and their messages show the name lossily.
    @Test func aFileWhoseNameIsNotUTF8OpensAndAMissingOneIsNamed() throws {
        let directory = NSTemporaryDirectory() + "/announce-names-\(getpid())"
        mkdir(directory, 0o700)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let name = FileName(bytes: Array((directory + "/caf").utf8) + [0xE9] + Array(".wav".utf8))
        // A 16-bit mono WAV of 100 silent frames, written by the name's bytes.
        var wav = Array("RIFF".utf8) + le32(36 + 200) + Array("WAVEfmt ".utf8) + le32(16)
        wav +=
            [1, 0, 1, 0] + le32(8000) + le32(16000) + [2, 0, 16, 0] + Array("data".utf8) + le32(200)
            + [UInt8](repeating: 0, count: 200)
        let fd = name.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL, 0o600) }
        try #require(fd >= 0)
        _ = wav.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let decoder = try DecoderRegistry.open(name)
        #expect(decoder.info.frames == 100 && decoder.path == name.text)
        let missing = FileName(bytes: Array((directory + "/nope").utf8) + [0xFF])
        #expect(throws: AnnounceError.cannotOpen(path: directory + "/nope\u{FFFD}", reason: "no such file")) {
            try DecoderRegistry.open(missing)
        }
    }

    private func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
}
