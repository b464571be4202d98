/// The container a source's bytes came in, as its decoder found it. Policy keys on the case;
/// `name` is only for people (`announce info`, messages).
public enum Container: Hashable, Sendable {
    case wav, wavExtensible, rifx, rf64, wave64, caf, aiff, aifc
    case flac, ogg, mp3
    case au, paf, svx8, nistSphere, voc, ircam, mat4, mat5, pvf, xi, htk, sds, avr, soundDesigner2, psionWVE, mpc2k
    /// One the decoder reads but has no case for ("libsndfile format 0x…").
    case other(String)

    public var name: String {
        switch self {
        case .wav: "WAV"
        case .wavExtensible: "WAV (extensible)"
        case .rifx: "WAV (RIFX)"
        case .rf64: "RF64"
        case .wave64: "Wave64"
        case .caf: "CAF"
        case .aiff: "AIFF"
        case .aifc: "AIFC"
        case .flac: "FLAC"
        case .ogg: "Ogg"
        case .mp3: "MP3"
        case .au: "AU"
        case .paf: "PAF"
        case .svx8: "8SVX"
        case .nistSphere: "NIST SPHERE"
        case .voc: "VOC"
        case .ircam: "IRCAM"
        case .mat4: "MAT4"
        case .mat5: "MAT5"
        case .pvf: "PVF"
        case .xi: "XI"
        case .htk: "HTK"
        case .sds: "SDS"
        case .avr: "AVR"
        case .soundDesigner2: "Sound Designer 2"
        case .psionWVE: "Psion WVE"
        case .mpc2k: "MPC2K"
        case .other(let name): name
        }
    }
}

/// How the samples inside the container are coded. Policy keys on the case; `name` is for people.
public enum Codec: Hashable, Sendable {
    /// Linear integer PCM: "PCM 16-bit", "PCM 8-bit unsigned".
    case pcm(bits: Int, unsigned: Bool = false)
    /// Linear float PCM: "float 32-bit".
    case float(bits: Int)
    /// "FLAC 24-bit"; the size is nil until the stream's header has been read.
    case flac(bits: Int?)
    case alac(bits: Int)
    case vorbis, opus
    /// MPEG audio frames; nil when the decoder could not describe them ("MPEG audio").
    case mpeg(MPEGAudio?)
    case muLaw, aLaw, imaADPCM, msADPCM, okiADPCM, g721ADPCM, g723ADPCM, nmsADPCM, gsm610
    case dwvw(bits: Int), dpcm(bits: Int)
    /// A codec named but not told apart here ("MPEG Layer III" as libsndfile reports it, "sub-format 0x…").
    case other(String)

    /// Integer or float PCM: samples as they are, no decoding.
    public var isLinearPCM: Bool {
        switch self {
        case .pcm, .float: true
        default: false
        }
    }

    public var name: String {
        switch self {
        case .pcm(let bits, let unsigned): "PCM \(bits)-bit" + (unsigned ? " unsigned" : "")
        case .float(let bits): "float \(bits)-bit"
        case .flac(let bits): bits.map { "FLAC \($0)-bit" } ?? "FLAC"
        case .alac(let bits): "ALAC \(bits)-bit"
        case .vorbis: "Vorbis"
        case .opus: "Opus"
        case .mpeg(let audio): audio?.name ?? "MPEG audio"
        case .muLaw: "mu-law"
        case .aLaw: "A-law"
        case .imaADPCM: "IMA ADPCM"
        case .msADPCM: "MS ADPCM"
        case .okiADPCM: "OKI ADPCM"
        case .g721ADPCM: "G.721 ADPCM"
        case .g723ADPCM: "G.723 ADPCM"
        case .nmsADPCM: "NMS ADPCM"
        case .gsm610: "GSM 6.10"
        case .dwvw(let bits): "DWVW \(bits)-bit"
        case .dpcm(let bits): "DPCM \(bits)-bit"
        case .other(let name): name
        }
    }
}

/// An MPEG audio stream as its frames describe it: "MPEG-1 Layer III 128 kbit/s CBR".
public struct MPEGAudio: Hashable, Sendable {
    /// "1", "2" or "2.5".
    public var version: String
    /// 1 to 3.
    public var layer: Int
    public var bitrate: Bitrate

    public enum Bitrate: Hashable, Sendable {
        case constant(kbps: Int)
        case average
        case variable
    }

    public init(version: String, layer: Int, bitrate: Bitrate) {
        self.version = version
        self.layer = layer
        self.bitrate = bitrate
    }

    public var name: String {
        let layer = String(repeating: "I", count: max(0, layer))
        return switch bitrate {
        case .constant(let kbps): "MPEG-\(version) Layer \(layer) \(kbps) kbit/s CBR"
        case .average: "MPEG-\(version) Layer \(layer) ABR"
        case .variable: "MPEG-\(version) Layer \(layer) VBR"
        }
    }
}
