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

/// A good clip made by tests/make-fixtures.sh, what announce should make of it, and its
/// reference decodes.
struct Clip: Sendable, CustomTestStringConvertible {
    var file: String
    /// The device format announce negotiates on the file device: the source's exact format.
    var format: SampleFormat
    var sampleRate: Int
    var channels: Int
    /// `announce info`'s container.
    var container: String
    var references: [Reference]

    var testDescription: String { file }

    /// The first reference decoding the whole clip: its length is the clip's.
    var fullReference: Reference { references.first(where: \.coversWholeClip)! }
}

extension Reference {
    static func exact(_ file: String, _ note: String = "lossless: the same integers or floats") -> Reference {
        Reference(file: file, tolerance: Tolerance.exact, note: note)
    }
}

enum Clips {
    static let mp3Note = "mpg123 CLI: the same libmpg123, gapless, float output — bit-identical"

    static let all: [Clip] = [
        Clip(file: "wav16-stereo.wav", format: .int16, sampleRate: 44100, channels: 2, container: "WAV",
             references: [.exact("wav16-stereo.wav.ref.s16")]),
        Clip(file: "wav16-second.wav", format: .int16, sampleRate: 44100, channels: 2, container: "WAV",
             references: [.exact("wav16-second.wav.ref.s16")]),
        Clip(file: "wav16-mono.wav", format: .int16, sampleRate: 48000, channels: 1, container: "WAV",
             references: [.exact("wav16-mono.wav.ref.s16")]),
        Clip(file: "wav8-mono.wav", format: .int16, sampleRate: 16000, channels: 1, container: "WAV",
             references: [.exact("wav8-mono.wav.ref.s16", "8-bit unsigned as int16, (x - 128) << 8, exact")]),
        // sox writes WAVE_FORMAT_EXTENSIBLE for 24-bit.
        Clip(file: "wav24.wav", format: .int32, sampleRate: 48000, channels: 2, container: "WAV (extensible)",
             references: [.exact("wav24.wav.ref.s32", "24-bit left-justified in int32 (x << 8), exact")]),
        Clip(file: "wavfloat.wav", format: .float32, sampleRate: 44100, channels: 2, container: "WAV",
             references: [.exact("wavfloat.wav.ref.f32")]),
        Clip(file: "wavext-6ch.wav", format: .int16, sampleRate: 48000, channels: 6, container: "WAV (extensible)",
             references: [.exact("wavext-6ch.wav.ref.s16")]),
        Clip(file: "rf64.wav", format: .int16, sampleRate: 44100, channels: 2, container: "RF64",
             references: [.exact("rf64.wav.ref.s16")]),
        Clip(file: "clip.caf", format: .int16, sampleRate: 32000, channels: 2, container: "CAF",
             references: [.exact("clip.caf.ref.s16")]),
        Clip(file: "clip.aiff", format: .int16, sampleRate: 22050, channels: 2, container: "AIFF",
             references: [.exact("clip.aiff.ref.s16")]),
        Clip(file: "float.aifc", format: .float32, sampleRate: 44100, channels: 1, container: "AIFC",
             references: [.exact("float.aifc.ref.f32")]),
        Clip(file: "sowt.aifc", format: .int16, sampleRate: 44100, channels: 2, container: "AIFC",
             references: [.exact("sowt.aifc.ref.s16")]),
        Clip(file: "flac16.flac", format: .int16, sampleRate: 44100, channels: 2, container: "FLAC",
             references: [.exact("flac16.flac.ref.s16")]),
        Clip(file: "flac24.flac", format: .int32, sampleRate: 48000, channels: 2, container: "FLAC",
             references: [.exact("flac24.flac.ref.s32", "24-bit left-justified in int32 (x << 8), exact")]),
        Clip(file: "one-frame.wav", format: .int16, sampleRate: 44100, channels: 2, container: "WAV",
             references: [.exact("one-frame.wav.ref.s16")]),
        Clip(file: "speech.wav", format: .int16, sampleRate: 22050, channels: 1, container: "WAV",
             references: [.exact("speech.wav.ref.s16")]),
        Clip(file: "vorbis.ogg", format: .float32, sampleRate: 44100, channels: 2, container: "Ogg",
             references: [
                // libvorbisfile through sox: full length, but ov_read rounds to 16 bits, so
                // announce's floats differ by up to half an int16 LSB (seen: exactly that).
                Reference(file: "vorbis.ogg.ref-sox.f32", tolerance: 0.5 / 32768 + 1e-7,
                          note: "libvorbisfile via sox, rounded to int16: half an LSB"),
                // ffmpeg's own Vorbis decoder: float, but a different implementation (seen
                // 3e-7) and it drops the clip's last 128 frames.
                Reference(file: "vorbis.ogg.ref.f32", tolerance: 1e-6, coversWholeClip: false,
                          note: "ffmpeg native float decoder: rounding differences, seen 3e-7"),
             ]),
        Clip(file: "opus.opus", format: .float32, sampleRate: 48000, channels: 2, container: "Ogg",
             references: [.exact("opus.opus.ref.f32", "libopus float decode through ffmpeg — bit-identical")]),
        Clip(file: "cbr128.mp3", format: .float32, sampleRate: 44100, channels: 2, container: "MP3",
             references: [.exact("cbr128.mp3.ref.f32", mp3Note)]),
        Clip(file: "vbr.mp3", format: .float32, sampleRate: 44100, channels: 2, container: "MP3",
             references: [.exact("vbr.mp3.ref.f32", mp3Note)]),
        Clip(file: "mono.mp3", format: .float32, sampleRate: 22050, channels: 1, container: "MP3",
             references: [.exact("mono.mp3.ref.f32", mp3Note)]),
        Clip(file: "cover.mp3", format: .float32, sampleRate: 44100, channels: 2, container: "MP3",
             references: [.exact("cover.mp3.ref.f32", mp3Note)]),
    ]

    static func named(_ file: String) -> Clip { all.first { $0.file == file }! }

    /// The reference decode of `clip` as PCM.
    static func load(_ clip: Clip, _ reference: Reference? = nil) throws -> PCM {
        try PCM.reference(Harness.fixture((reference ?? clip.fullReference).file), channels: clip.channels)
    }
}
