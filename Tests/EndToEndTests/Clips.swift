import Testing

/// A reference decode of a clip and how closely announce's output must follow it.
struct Reference: Sendable {
    /// File name under the fixtures directory.
    var file: String
    /// Largest absolute difference allowed, normalised to full scale.
    var tolerance: Double
    /// False when the reference tool decodes only a prefix of the clip.
    var coversWholeClip = true
    /// Why this tolerance.
    var note: String
}

/// A good clip made by Tests/Shell/make-fixtures.sh, what announce should make of it, and its
/// reference decodes.
struct Clip: Sendable, CustomTestStringConvertible {
    var file: String
    /// The format that reproduces the source exactly, and its reference decodes' format.
    var sourceFormat: SampleFormat
    var sampleRate: Int
    var channels: Int
    /// `announce info`'s container.
    var container: String
    var references: [Reference]

    var testDescription: String { file }

    /// The first reference decoding the whole clip: its length is the clip's.
    var fullReference: Reference { references.first(where: \.coversWholeClip)! }

    /// The device format announce negotiates on the file device: the source's exact format,
    /// except that float becomes int32 (ALSA's file plugin can only describe integer PCM).
    var format: SampleFormat { sourceFormat == .float32 ? .int32 : sourceFormat }
}

extension Reference {
    static func exact(_ file: String, _ note: String = "lossless: the same integers or floats") -> Reference {
        Reference(file: file, tolerance: Tolerance.exact, note: note)
    }
}

extension Clip {
    /// A clip with one bit-exact reference decode, `FILE.ref.s16|s32|f32` after its format.
    static func exact(
        _ file: String, _ format: SampleFormat, _ sampleRate: Int, _ channels: Int, _ container: String,
        _ note: String = "lossless: the same integers or floats"
    ) -> Clip {
        Clip(
            file: file, sourceFormat: format, sampleRate: sampleRate, channels: channels, container: container,
            references: [.exact("\(file).ref.\(format.referenceExtension)", note)])
    }
}

enum Clips {
    static let mp3Note = "mpg123 CLI: the same libmpg123, gapless, float output — bit-identical"
    static let soxNote = "sox's own reader: the same integers"
    static let twentyFourBitNote = "24-bit left-justified in int32 (x << 8), exact"

    static let all: [Clip] = [
        .exact("wav16-stereo.wav", .int16, 44100, 2, "WAV"),
        .exact("wav16-second.wav", .int16, 44100, 2, "WAV"),
        .exact("wav16-mono.wav", .int16, 48000, 1, "WAV"),
        .exact("wav8-mono.wav", .int16, 16000, 1, "WAV", "8-bit unsigned as int16, (x - 128) << 8, exact"),
        // sox writes WAVE_FORMAT_EXTENSIBLE for 24-bit.
        .exact("wav24.wav", .int32, 48000, 2, "WAV (extensible)", twentyFourBitNote),
        .exact("wavfloat.wav", .float32, 44100, 2, "WAV"),
        .exact("wavext-6ch.wav", .int16, 48000, 6, "WAV (extensible)"),
        .exact("rf64.wav", .int16, 44100, 2, "RF64"),
        .exact("clip.caf", .int16, 32000, 2, "CAF"),
        .exact("clip.aiff", .int16, 22050, 2, "AIFF"),
        .exact("float.aifc", .float32, 44100, 1, "AIFC"),
        .exact("sowt.aifc", .int16, 44100, 2, "AIFC"),
        .exact("flac16.flac", .int16, 44100, 2, "FLAC"),
        .exact("flac24.flac", .int32, 48000, 2, "FLAC", twentyFourBitNote),
        .exact("one-frame.wav", .int16, 44100, 2, "WAV"),
        .exact("speech.wav", .int16, 22050, 1, "WAV"),
        // libsndfile's other containers, decoded by sox's own readers for the reference.
        .exact("rifx.wav", .int16, 22050, 2, "WAV (RIFX)", soxNote),
        .exact("container.w64", .int16, 22050, 2, "Wave64", soxNote),
        .exact("container.au", .int16, 22050, 2, "AU", soxNote),
        .exact("container.sf", .int16, 22050, 2, "IRCAM", soxNote),
        .exact("container.sph", .int16, 22050, 2, "NIST SPHERE", soxNote),
        .exact("container.avr", .int16, 22050, 2, "AVR", soxNote),
        .exact("container.paf", .int16, 22050, 2, "PAF", soxNote),
        .exact("container.8svx", .int16, 22050, 1, "8SVX", "sox: 8-bit as int16, x << 8, exact"),
        .exact("container.wve", .int16, 8000, 1, "Psion WVE", "sox: G.711 A-law expanded to int16, exact"),
        .exact("alac.caf", .int16, 22050, 2, "CAF", "ffmpeg's ALAC decoder: lossless, the same integers"),
        .exact("flac.oga", .int16, 22050, 2, "Ogg", "ffmpeg's FLAC decoder: lossless, the same integers"),
        Clip(
            file: "vorbis.ogg", sourceFormat: .float32, sampleRate: 44100, channels: 2, container: "Ogg",
            references: [
                // libvorbisfile through sox: full length, but ov_read rounds to 16 bits, so
                // announce's floats differ by up to half an int16 LSB (seen: exactly that).
                Reference(
                    file: "vorbis.ogg.ref-sox.f32", tolerance: 0.5 / 32768 + 1e-7,
                    note: "libvorbisfile via sox, rounded to int16: half an LSB"),
                // ffmpeg's own Vorbis decoder: float, but a different implementation (seen
                // 3e-7) and it drops the clip's last 128 frames.
                Reference(
                    file: "vorbis.ogg.ref.f32", tolerance: 1e-6, coversWholeClip: false,
                    note: "ffmpeg native float decoder: rounding differences, seen 3e-7")
            ]),
        .exact("opus.opus", .float32, 48000, 2, "Ogg", "libopus float decode through ffmpeg — bit-identical"),
        .exact("cbr128.mp3", .float32, 44100, 2, "MP3", mp3Note),
        .exact("vbr.mp3", .float32, 44100, 2, "MP3", mp3Note),
        .exact("mono.mp3", .float32, 22050, 1, "MP3", mp3Note),
        .exact("cover.mp3", .float32, 44100, 2, "MP3", mp3Note)
    ]

    static func named(_ file: String) -> Clip { all.first { $0.file == file }! }

    /// The reference decode of `clip` as PCM, at the format the file device gets.
    static func load(_ clip: Clip, _ reference: Reference? = nil) throws -> PCM {
        try PCM.reference(Harness.fixture((reference ?? clip.fullReference).file), channels: clip.channels)
            .quantised(to: clip.format)
    }
}
