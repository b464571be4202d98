import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// WAV (incl. RF64 and extensible), CAF, AIFF/AIFC, FLAC and Ogg Vorbis/Opus through libsndfile.
public final class SndFileDecoder: AudioDecoder {
    public let path: String
    public private(set) var info: AudioFileInfo
    /// Float sources (float PCM, lossy codecs) read as float only: libsndfile would hand them
    /// to an integer read unscaled, and one float-to-integer rule (the engine's) serves all.
    public var readableFormats: Set<SampleFormat> {
        info.exactSampleFormat == .float32 ? [.float32] : [.float32, .int32, .int16]
    }
    public private(set) var truncationWarning: String?
    private let file: OpaquePointer
    private var framesRead: Int64 = 0

    /// The header's length when the file holds less.
    private let promisedFrames: Int64?
    /// A cut CAF is read through a view giving its data chunk the size that is there.
    private let patchedView: PatchedFile?

    /// Takes ownership of `fd` (closed with the decoder, or here on failure).
    init(path: String, fd: Int32, container: SniffedContainer) throws(AnnounceError) {
        self.path = path
        var header = [UInt8](repeating: 0, count: 65536)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        header.removeLast(header.count - max(0, count))
        var sfInfo = SF_INFO()
        var status = stat()
        if container == .caf, fstat(fd, &status) == 0, let data = DeclaredLength.cafDataSize(header),
           data.size > Int(status.st_size) - data.fieldOffset - 8 {
            patchedView = PatchedFile(fd: fd, length: Int64(status.st_size), fieldOffset: data.fieldOffset,
                                      value: Int(status.st_size) - data.fieldOffset - 8)
        } else {
            patchedView = nil
        }
        // The view owns `fd` when there is one: libsndfile must not get it too (two closes).
        guard let file = patchedView.map({ $0.open(&sfInfo) }) ?? sf_open_fd(fd, Int32(SFM_READ), &sfInfo, 1) else {
            let reason = String(cString: sf_strerror(nil))
            throw .undecodable(path: path, reason: "not decodable audio (\(reason))")
        }
        self.file = file
        do {
            info = try Self.describe(sfInfo, path: path, sniffed: container)
        } catch {
            sf_close(file)
            throw error
        }
        let declared = DeclaredLength.frames(header)
        promisedFrames = declared.flatMap { $0 > Int64(sfInfo.frames) ? $0 : nil }
        info.damage = promisedFrames.map {
            DamageWarning.truncated(played: Int64(sfInfo.frames), promised: $0, sampleRate: info.sampleRate)
        }
    }

    deinit { sf_close(file) }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError) -> Int {
        let count = sf_count_t(frames)
        let got: sf_count_t = switch format {
        case .float32: sf_readf_float(file, buffer.assumingMemoryBound(to: Float.self), count)
        case .int32: sf_readf_int(file, buffer.assumingMemoryBound(to: Int32.self), count)
        case .int16: sf_readf_short(file, buffer.assumingMemoryBound(to: Int16.self), count)
        }
        framesRead += Int64(got)
        if got < count, truncationWarning == nil {
            if sf_error(file) != 0 {
                // libsndfile decoded what it could; say why it stopped instead of failing the clip.
                truncationWarning = "stopped after \(framesRead) frames: \(String(cString: sf_strerror(file)))"
            } else if promisedFrames != nil {
                truncationWarning = info.damage
            }
        }
        return Int(got)
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        guard sf_seek(file, sf_count_t(frame), SEEK_SET) >= 0 else {
            throw .undecodable(path: path, reason: "cannot seek to frame \(frame): \(String(cString: sf_strerror(file)))")
        }
        framesRead = frame
    }

    private static func describe(_ sf: SF_INFO, path: String, sniffed: SniffedContainer) throws(AnnounceError) -> AudioFileInfo {
        try validate(channels: Int(sf.channels), sampleRate: Int(sf.samplerate), path: path)
        let major = Int(announce_sf_major(sf.format)), minor = Int(announce_sf_minor(sf.format))
        let (sampleCodec, exact) = describeCodec(minor)
        var container = containerName(major, sniffed: sniffed)
        if major == SF_FORMAT_WAV, Int(sf.format) & SF_FORMAT_ENDMASK == SF_ENDIAN_BIG { container = "WAV (RIFX)" }
        // FLAC's codec is FLAC; libsndfile reports its sample size as a PCM sub-format.
        let codec = major == SF_FORMAT_FLAC ? sampleCodec.replacingPrefix("PCM", with: "FLAC") : sampleCodec
        if sf.frames <= 0 {
            throw .undecodable(path: path, reason: "holds no audio frames")
        }
        return AudioFileInfo(container: container, codec: codec, sampleRate: Int(sf.samplerate),
                             channels: Int(sf.channels), frames: Int64(sf.frames), exactSampleFormat: exact)
    }
}

/// The container's usual name, from libsndfile's major format.
private func containerName(_ major: Int, sniffed: SniffedContainer) -> String {
    switch major {
    case SF_FORMAT_WAV: "WAV"
    case SF_FORMAT_WAVEX: "WAV (extensible)"
    case SF_FORMAT_RF64: "RF64"
    case SF_FORMAT_CAF: "CAF"
    case SF_FORMAT_AIFF: sniffed == .aifc ? "AIFC" : "AIFF"  // libsndfile reports both as AIFF
    case SF_FORMAT_FLAC: "FLAC"
    case SF_FORMAT_OGG: "Ogg"
    case SF_FORMAT_W64: "Wave64"
    case SF_FORMAT_AU: "AU"
    case SF_FORMAT_PAF: "PAF"
    case SF_FORMAT_SVX: "8SVX"
    case SF_FORMAT_NIST: "NIST SPHERE"
    case SF_FORMAT_VOC: "VOC"
    case SF_FORMAT_IRCAM: "IRCAM"
    case SF_FORMAT_MAT4: "MAT4"
    case SF_FORMAT_MAT5: "MAT5"
    case SF_FORMAT_PVF: "PVF"
    case SF_FORMAT_XI: "XI"
    case SF_FORMAT_HTK: "HTK"
    case SF_FORMAT_SDS: "SDS"
    case SF_FORMAT_AVR: "AVR"
    case SF_FORMAT_SD2: "Sound Designer 2"
    case SF_FORMAT_WVE: "Psion WVE"
    case SF_FORMAT_MPC2K: "MPC2K"
    case SF_FORMAT_MPEG: "MP3"
    default: "libsndfile format 0x\(String(major, radix: 16))"
    }
}

/// Codec name and the sample format that reproduces it exactly.
private func describeCodec(_ minor: Int) -> (String, SampleFormat) {
    switch minor {
    case SF_FORMAT_PCM_S8: ("PCM 8-bit", .int16)
    case SF_FORMAT_PCM_U8: ("PCM 8-bit unsigned", .int16)
    case SF_FORMAT_PCM_16: ("PCM 16-bit", .int16)
    case SF_FORMAT_PCM_24: ("PCM 24-bit", .int32)
    case SF_FORMAT_PCM_32: ("PCM 32-bit", .int32)
    case SF_FORMAT_FLOAT: ("float 32-bit", .float32)
    case SF_FORMAT_DOUBLE: ("float 64-bit", .float32)
    case SF_FORMAT_ULAW: ("mu-law", .int16)
    case SF_FORMAT_ALAW: ("A-law", .int16)
    case SF_FORMAT_IMA_ADPCM: ("IMA ADPCM", .int16)
    case SF_FORMAT_MS_ADPCM: ("MS ADPCM", .int16)
    case SF_FORMAT_VORBIS: ("Vorbis", .float32)
    case SF_FORMAT_OPUS: ("Opus", .float32)
    case SF_FORMAT_ALAC_16: ("ALAC 16-bit", .int16)
    case SF_FORMAT_ALAC_20: ("ALAC 20-bit", .int32)
    case SF_FORMAT_ALAC_24: ("ALAC 24-bit", .int32)
    case SF_FORMAT_ALAC_32: ("ALAC 32-bit", .int32)
    case SF_FORMAT_DWVW_12: ("DWVW 12-bit", .int16)
    case SF_FORMAT_DWVW_16: ("DWVW 16-bit", .int16)
    case SF_FORMAT_DWVW_24: ("DWVW 24-bit", .int32)
    case SF_FORMAT_DPCM_8: ("DPCM 8-bit", .int16)
    case SF_FORMAT_DPCM_16: ("DPCM 16-bit", .int16)
    case SF_FORMAT_GSM610: ("GSM 6.10", .int16)
    case SF_FORMAT_VOX_ADPCM: ("OKI ADPCM", .int16)
    case SF_FORMAT_G721_32: ("G.721 ADPCM", .int16)
    case SF_FORMAT_G723_24, SF_FORMAT_G723_40: ("G.723 ADPCM", .int16)
    case SF_FORMAT_NMS_ADPCM_16, SF_FORMAT_NMS_ADPCM_24, SF_FORMAT_NMS_ADPCM_32: ("NMS ADPCM", .int16)
    case SF_FORMAT_MPEG_LAYER_III: ("MPEG Layer III", .float32)
    default: ("sub-format 0x\(String(minor, radix: 16))", .float32)
    }
}

/// Limits every decoder applies before trusting a header.
func validate(channels: Int, sampleRate: Int, path: String) throws(AnnounceError) {
    guard channels > 0 else { throw .undecodable(path: path, reason: "header says 0 channels") }
    guard channels <= maxChannels else {
        throw .undecodable(path: path, reason: "header says \(channels) channels; at most \(maxChannels) are supported")
    }
    guard sampleRate > 0 else { throw .undecodable(path: path, reason: "header says 0 Hz") }
    guard sampleRate <= maxSampleRate else {
        throw .undecodable(path: path, reason: "header says \(sampleRate) Hz; at most \(maxSampleRate) Hz is supported")
    }
}

let maxChannels = 32
let maxSampleRate = 768_000

extension String {
    func replacingPrefix(_ prefix: String, with replacement: String) -> String {
        hasPrefix(prefix) ? replacement + dropFirst(prefix.count) : self
    }
}
