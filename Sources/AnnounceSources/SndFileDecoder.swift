import AnnounceModel
import AnnounceSystem
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
    public var truncationWarning: String? { damage?.description }
    private var damage: Damage?
    private let file: OpaquePointer
    /// What libsndfile reads through; it lives as long as the handle. nil for a live stream's
    /// pipe, which libsndfile reads itself (it knows a pipe, and then never seeks).
    private let view: SndFileInput?
    private var framesRead: Int64 = 0

    /// The header's length when the file holds less.
    private let promisedFrames: Int64?
    /// libsndfile gives no length (SF_COUNT_MAX: a cut Ogg file has no last page to read it
    /// from): `LengthCount` counts it by decoding.
    private let lengthUnknown: Bool
    /// Vorbis and Opus decode in Vorbis channel order; nil when that is already WAV/ALSA order.
    private let wavOrder: [Int]?
    /// An Ogg stream of unknown length whose last page is cut or lacks the end-of-stream flag.
    private let oggCut: Bool
    /// An Ogg file whose last page belongs to another stream than its first (chained streams, one
    /// after another, or several multiplexed): libsndfile plays the first stream only; said so.
    private let oggMoreStreams: Bool
    /// A compressed WAV's `fact` length when libsndfile decodes more (GSM 6.10 pads its last
    /// block of 320 frames): what sox and ffmpeg play, and what plays here.
    private let factFrames: Int64?

    init(input: any ByteInput, container: SniffedContainer) throws(AnnounceError) {
        path = input.name
        let header = try input.bytes(at: 0, count: 65536)
        var sfInfo = SF_INFO()
        // A cut CAF is read through a view giving its data chunk the size that is there.
        var patchedField: (offset: Int, value: Int)?
        if container == .caf, let data = DeclaredLength.cafDataSize(header) {
            let size = Int(try input.settledLength())
            if data.size > size - data.fieldOffset - 8 {
                patchedField = (data.fieldOffset, size - data.fieldOffset - 8)
            }
        }
        view = SndFileInput(input, patchedField: patchedField)
        guard let file = view?.open(&sfInfo) else {
            try view?.cursor.check()
            let reason = String(cString: sf_strerror(nil))
            if container == .caf, let codec = Self.cafCodec(header) {
                throw .undecodable(path: path, reason: "\(codec) is not supported")
            }
            if container == .wav || container == .rf64, let codec = Self.wavCodec(header) {
                throw .undecodable(
                    path: path, reason: "\(container == .wav ? "WAV" : "RF64") with \(codec) is not supported")
            }
            throw .undecodable(path: path, reason: "not decodable audio (\(reason))")
        }
        self.file = file
        let tail: (cut: Bool, lastSerial: UInt32?)?
        do throws(AnnounceError) {
            // libsndfile reads a VOC's continuation blocks (type 2, as ffmpeg writes them) as samples.
            if announce_sf_major(sfInfo.format) == SF_FORMAT_VOC, try VOCBlocks.hasContinuation(input) {
                throw .undecodable(
                    path: path, reason: "VOC with continuation blocks (as ffmpeg writes it) is not supported")
            }
            tail = container == .ogg ? try Self.oggTail(input) : nil
            info = try Self.describe(sfInfo, path: path, sniffed: container)
        } catch {
            sf_close(file)
            throw error
        }
        factFrames = DeclaredLength.factFrames(header).flatMap { $0 > 0 && $0 < Int64(sfInfo.frames) ? $0 : nil }
        // Any length beyond a day at 768 kHz is libsndfile's "unknown", not a length.
        lengthUnknown = sfInfo.frames > 86_400 * Int64(Limits.sampleRates.upperBound)
        // libsndfile neither reorders Vorbis/Opus channels nor tells their map (SFC_GET_CHANNEL_MAP_INFO).
        let minor = Int(announce_sf_minor(sfInfo.format))
        wavOrder =
            minor == SF_FORMAT_VORBIS || minor == SF_FORMAT_OPUS
            ? VorbisChannelOrder.wavOrder(channels: Int(sfInfo.channels)) : nil
        oggCut = lengthUnknown && tail?.cut == true
        oggMoreStreams = tail.map { $0.lastSerial != nil && $0.lastSerial != Self.oggFirstSerial(header) } ?? false
        if let factFrames { info.frames = factFrames }
        let declared = DeclaredLength.frames(header)
        promisedFrames = declared.flatMap { $0 > Int64(sfInfo.frames) ? $0 : nil }
        info.damage =
            promisedFrames.map {
                Damage.truncated(played: Int64(sfInfo.frames), promised: $0, sampleRate: info.sampleRate)
            } ?? (oggMoreStreams ? .moreStreams : nil)
        if lengthUnknown {
            info.frames = nil
            try ensureSomethingDecodes()  // deinit closes the file
        }
    }

    /// A live stream's segment: `fd` a pipe, read once from its start, never sought; taken.
    /// Its length is never known, and nothing of it is checked ahead.
    init(path: String, fd: Int32, container: SniffedContainer, sequential: Bool) throws(AnnounceError) {
        self.path = path
        var sfInfo = SF_INFO()
        guard let file = sf_open_fd(fd, Int32(SFM_READ), &sfInfo, 1) else {
            close(fd)
            throw .undecodable(path: path, reason: "not decodable audio (\(String(cString: sf_strerror(nil))))")
        }
        self.file = file
        view = nil
        do throws(AnnounceError) { info = try Self.describe(sfInfo, path: path, sniffed: container) } catch {
            sf_close(file)
            throw error
        }
        info.frames = nil
        let minor = Int(announce_sf_minor(sfInfo.format))
        wavOrder =
            minor == SF_FORMAT_VORBIS || minor == SF_FORMAT_OPUS
            ? VorbisChannelOrder.wavOrder(channels: Int(sfInfo.channels)) : nil
        (promisedFrames, factFrames, oggCut, oggMoreStreams) = (nil, nil, false, false)
        lengthUnknown = true
    }

    deinit { sf_close(file) }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int
    {
        let count = sf_count_t(factFrames.map { max(0, min(Int64(frames), $0 - framesRead)) } ?? Int64(frames))
        if count == 0 && frames > 0 { return 0 }  // the fact length is out
        let got: sf_count_t =
            switch format {
            case .float32: sf_readf_float(file, buffer.assumingMemoryBound(to: Float.self), count)
            case .int32: sf_readf_int(file, buffer.assumingMemoryBound(to: Int32.self), count)
            case .int16: sf_readf_short(file, buffer.assumingMemoryBound(to: Int16.self), count)
            }
        try view?.cursor.check()
        framesRead += Int64(got)
        if let wavOrder, got > 0 {
            VorbisChannelOrder.reorder(buffer.assumingMemoryBound(to: Float.self), frames: Int(got), to: wavOrder)
        }
        if got < count, damage == nil {
            if sf_error(file) != 0 {
                // libsndfile decoded what it could; say why it stopped instead of failing the clip.
                damage = .stopped("stopped after \(framesRead) frames: \(String(cString: sf_strerror(file)))")
            } else if promisedFrames != nil {
                damage = info.damage
            } else if oggCut {
                damage = .truncated(played: framesRead, promised: nil, sampleRate: info.sampleRate)
            } else if oggMoreStreams {
                damage = .moreStreams
            }
        }
        return Int(got)
    }

    public var lengthIsExact: Bool { !lengthUnknown }

    /// Decodes to the end so `info.frames` is what plays (the length libsndfile did not give).
    public func scanForExactLength() throws(AnnounceError) {
        guard lengthUnknown else { return }
        let start = framesRead
        try seek(toFrame: 0)
        let chunk = 4096
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: chunk * info.channels * 4, alignment: 16)
        defer { scratch.deallocate() }
        while try read(into: scratch, frames: chunk, as: .float32) > 0 {}
        info.frames = framesRead
        info.damage = damage
        damage = nil
        try seek(toFrame: start)
    }

    /// "Opus in CAF": the codec a CAF's `desc` chunk names (it comes first), for a file
    /// libsndfile refuses. It reads the ALAC it writes itself, not ffmpeg's.
    private static func cafCodec(_ header: [UInt8]) -> String? {
        guard header.count >= 32, header[8..<12].elementsEqual("desc".utf8) else { return nil }
        let names = [
            "alac": "ALAC", "ima4": "IMA ADPCM", "opus": "Opus", "aac ": "AAC", ".mp3": "MP3", "flac": "FLAC",
            "ac-3": "AC-3", "MAC3": "MACE 3:1", "MAC6": "MACE 6:1", "QDM2": "QDesign"
        ]
        return names[String(decoding: header[28..<32], as: UTF8.self)].map {
            $0 == "ALAC" ? "ALAC in CAF (as ffmpeg writes it)" : "\($0) in CAF"
        }
    }

    /// What a WAV's `fmt ` chunk holds that libsndfile does not decode, for a refusal: "64-bit
    /// integer samples", "MP3 audio"; nil when it is a kind libsndfile reads (it failed for
    /// another reason: 0 channels, a malformed chunk) or another codec it may know.
    /// WAVE_FORMAT_EXTENSIBLE's sub-format GUID starts with the format tag it stands for.
    static func wavCodec(_ header: [UInt8]) -> String? {
        func little(_ at: Int, _ count: Int) -> Int {
            header[at..<at + count].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        var chunk = 12
        while chunk + 8 <= header.count {
            let size = little(chunk + 4, 4)
            guard header[chunk..<chunk + 4].elementsEqual("fmt ".utf8) else {
                chunk += 8 + size + size % 2
                continue
            }
            guard size >= 16, chunk + 24 <= header.count else { return nil }
            var tag = little(chunk + 8, 2)
            let bits = little(chunk + 22, 2)
            if tag == 0xFFFE, size >= 40, chunk + 34 <= header.count { tag = little(chunk + 32, 2) }
            let names = [
                0x50: "MPEG audio", 0x55: "MP3 audio", 0xFF: "AAC audio", 0x1610: "AAC audio", 0x161: "WMA audio",
                0x162: "WMA audio", 0x2000: "AC-3 audio", 0x2001: "DTS audio", 0x674F: "Vorbis audio"
            ]
            return switch tag {
            case 1 where ![8, 16, 24, 32].contains(bits): "\(bits)-bit integer samples"
            case 3 where ![32, 64].contains(bits): "\(bits)-bit float samples"
            default: names[tag]
            }
        }
        return nil
    }

    /// A file of which not one frame decodes is refused at once, not played as silence.
    private func ensureSomethingDecodes() throws(AnnounceError) {
        var sample = [Float](repeating: 0, count: info.channels * 64)
        let got = sample.withUnsafeMutableBytes {
            sf_readf_float(file, $0.baseAddress!.assumingMemoryBound(to: Float.self), 64)
        }
        try view?.cursor.check()
        guard got > 0 else {
            throw .undecodable(
                path: path, reason: oggCut ? "cut before its first audio page" : DecoderRegistry.noAudioFrames)
        }
        try seek(toFrame: 0)
    }

    /// An Ogg page's stream serial number (bytes 14-17, little-endian).
    private static func serial(_ bytes: [UInt8], page: Int) -> UInt32? {
        guard page + 18 <= bytes.count else { return nil }
        return bytes[page + 14..<page + 18].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func oggFirstSerial(_ header: [UInt8]) -> UInt32? {
        header.starts(with: Array("OggS".utf8)) ? serial(header, page: 0) : nil
    }

    /// An Ogg file's last page: whether it is incomplete or not marked end of stream (cut),
    /// and its stream's serial number.
    private static func oggTail(_ input: any ByteInput) throws(AnnounceError) -> (cut: Bool, lastSerial: UInt32?) {
        let size = Int(try input.settledLength())
        let tailLength = min(size, 1 << 16)
        let tail = try input.bytes(at: Int64(size - tailLength), count: tailLength)
        guard tail.count == tailLength else { return (false, nil) }
        let capture = Array("OggS".utf8)
        // The last page header in the tail: its segment table gives the page's length.
        guard
            let page = stride(from: tailLength - 27, through: 0, by: -1).first(where: {
                tail[$0...].starts(with: capture)
            })
        else {
            return (true, nil)
        }
        let segments = Int(tail[page + 26])
        guard page + 27 + segments <= tailLength else { return (true, serial(tail, page: page)) }
        let length = 27 + segments + tail[page + 27..<page + 27 + segments].reduce(0) { $0 + Int($1) }
        return (page + length != tailLength || tail[page + 5] & 0x04 == 0, serial(tail, page: page))
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        let position = sf_seek(file, sf_count_t(frame), SEEK_SET)
        guard position >= 0 else {
            try view?.cursor.check()
            throw .undecodable(
                path: path, reason: "cannot seek to frame \(frame): \(String(cString: sf_strerror(file)))")
        }
        // Where it got: past the end of a cut Ogg file, its end, which is where a warning counts from.
        framesRead = Int64(position)
    }

    private static func describe(_ sf: SF_INFO, path: String, sniffed: SniffedContainer) throws(AnnounceError)
        -> AudioFileInfo
    {
        try validate(channels: Int(sf.channels), sampleRate: Int(sf.samplerate), path: path)
        let major = Int(announce_sf_major(sf.format))
        let minor = Int(announce_sf_minor(sf.format))
        let (sampleCodec, exact) = describeCodec(minor)
        var container = sndfileContainer(major, sniffed: sniffed)
        if major == SF_FORMAT_WAV, Int(sf.format) & SF_FORMAT_ENDMASK == SF_ENDIAN_BIG { container = .rifx }
        // FLAC's codec is FLAC; libsndfile reports its sample size as a PCM sub-format.
        let codec =
            if major == SF_FORMAT_FLAC, case .pcm(let bits, _) = sampleCodec { Codec.flac(bits: bits) } else {
                sampleCodec
            }
        if sf.frames <= 0 {
            throw .undecodable(path: path, reason: "holds no audio frames")
        }
        return AudioFileInfo(
            container: container, codec: codec, sampleRate: Int(sf.samplerate),
            channels: Int(sf.channels), frames: Int64(sf.frames), exactSampleFormat: exact)
    }
}
