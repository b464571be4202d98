import AnnounceModel
import AnnounceSystem
import CFLAC

#if canImport(Glibc)
    import Glibc
#endif

/// Native FLAC and FLAC in Ogg through libFLAC's stream decoder. Unlike libsndfile's FLAC reader, it resyncs
/// past damaged frames (and junk before the first one) instead of ending the stream, and
/// decodes every frame present whatever total STREAMINFO claims (0, too few, too many).
public final class FLACDecoder: AudioDecoder {
    public var path: String { cursor.input.name }
    public private(set) var info: AudioFileInfo
    public let readableFormats: Set<SampleFormat> = [.float32, .int32, .int16]
    public var truncationWarning: String? { damage?.description }
    private var damage: Damage? {
        if skippedDamage { return .skipped }
        if let promised = promisedFrames, ended, position < promised {
            return .truncated(played: position, promised: promised, sampleRate: info.sampleRate)
        }
        return nil
    }
    private let decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    /// What libFLAC reads through.
    fileprivate let cursor: InputCursor
    /// STREAMINFO's total, when it gives one.
    private var promisedFrames: Int64?
    private var bitsPerSample = 0
    /// Decoded frames not yet read: interleaved, as libFLAC gives them (right-justified).
    private var pending: UnsafeMutablePointer<Int32>
    private var pendingCapacity = 0
    private var pendingFrames = 0, pendingOffset = 0
    private var position: Int64 = 0
    private var ended = false
    /// An error was reported (lost sync, a bad frame) and not yet followed by a good frame.
    private var damagePending = false
    /// Decoding resumed after damaged data.
    private var skippedDamage = false
    private var streamInfo: (rate: Int, channels: Int, bits: Int, total: Int64)?

    init(input: any ByteInput, inOgg: Bool = false) throws(AnnounceError) {
        cursor = InputCursor(input)
        let path = input.name
        guard let decoder = FLAC__stream_decoder_new() else { throw .internal("libFLAC did not initialise") }
        pending = .allocate(capacity: 0)
        self.decoder = decoder
        let container: Container = inOgg ? .ogg : .flac
        info = AudioFileInfo(
            container: container, codec: .flac(bits: nil), sampleRate: 0, channels: 0, frames: nil,
            exactSampleFormat: .int16)
        promisedFrames = nil
        _ = FLAC__stream_decoder_set_md5_checking(decoder, 0)
        let client = Unmanaged.passUnretained(self).toOpaque()
        let status = (inOgg ? FLAC__stream_decoder_init_ogg_stream : FLAC__stream_decoder_init_stream)(
            decoder, flacRead, flacSeek, flacTell, flacLength, flacEOF, flacWrite, flacMetadata, flacError, client)
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            if status == FLAC__STREAM_DECODER_INIT_STATUS_UNSUPPORTED_CONTAINER {
                throw .undecodable(path: path, reason: "FLAC in Ogg is not supported by this libFLAC")
            }
            throw .internal("libFLAC could not start decoding")
        }
        // Up to the first audio frame; oversized or unknown metadata blocks are skipped.
        _ = FLAC__stream_decoder_process_until_end_of_metadata(decoder)
        try cursor.check()
        guard let stream = streamInfo else {
            throw .undecodable(path: path, reason: "FLAC without a readable STREAMINFO block")
        }
        try validate(channels: stream.channels, sampleRate: stream.rate, path: path)
        guard (4...32).contains(stream.bits) else {
            throw .undecodable(path: path, reason: "FLAC header says \(stream.bits)-bit samples")
        }
        bitsPerSample = stream.bits
        promisedFrames = stream.total > 0 ? stream.total : nil
        info = AudioFileInfo(
            container: container, codec: .flac(bits: stream.bits), sampleRate: stream.rate,
            channels: stream.channels, frames: promisedFrames,
            exactSampleFormat: stream.bits <= 16 ? .int16 : .int32)
        // Nothing decodes at all: say so now rather than play silence.
        guard try fill() else {
            throw .undecodable(
                path: path,
                reason: "no FLAC audio frame decodes"
                    + (FLAC__stream_decoder_get_state(decoder) == FLAC__STREAM_DECODER_END_OF_STREAM
                        ? " before the end of the file" : ""))
        }
    }

    deinit {
        FLAC__stream_decoder_delete(decoder)
        pending.deallocate()
    }

    /// Decodes frames until some are pending; false at the end of the stream.
    private func fill() throws(AnnounceError) -> Bool {
        while pendingOffset == pendingFrames {
            if ended { return false }
            let state = FLAC__stream_decoder_get_state(decoder)
            if state == FLAC__STREAM_DECODER_END_OF_STREAM
                || state.rawValue > FLAC__STREAM_DECODER_END_OF_STREAM.rawValue
                || FLAC__stream_decoder_process_single(decoder) == 0
            {
                ended = true
            }
            try cursor.check()
        }
        return true
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int
    {
        var done = 0
        let channels = info.channels
        while done < frames, try fill() {
            let count = min(frames - done, pendingFrames - pendingOffset)
            let source = pending + pendingOffset * channels
            let samples = count * channels
            let start = done * channels
            switch format {
            case .int16:
                let out = buffer.assumingMemoryBound(to: Int16.self) + start
                if bitsPerSample <= 16 {
                    let shift = Int32(16 - bitsPerSample)
                    for i in 0..<samples { out[i] = Int16(truncatingIfNeeded: source[i] << shift) }
                } else {
                    let shift = Int32(bitsPerSample - 16)
                    for i in 0..<samples { out[i] = Int16(truncatingIfNeeded: source[i] >> shift) }
                }
            case .int32:
                let out = buffer.assumingMemoryBound(to: Int32.self) + start
                let shift = Int32(32 - bitsPerSample)
                for i in 0..<samples { out[i] = source[i] << shift }
            case .float32:
                let out = buffer.assumingMemoryBound(to: Float.self) + start
                let scale = 1 / Float(1 << (bitsPerSample - 1))
                for i in 0..<samples { out[i] = Float(source[i]) * scale }
            }
            pendingOffset += count
            done += count
        }
        position += Int64(done)
        return done
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        pendingFrames = 0
        pendingOffset = 0
        ended = false
        if FLAC__stream_decoder_seek_absolute(decoder, FLAC__uint64(frame)) == 0 {
            try cursor.check()
            // A failed seek leaves the decoder needing a flush; then decode from the start and skip.
            _ = FLAC__stream_decoder_flush(decoder)
            guard FLAC__stream_decoder_reset(decoder) != 0,
                FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0
            else {
                throw .undecodable(path: path, reason: "cannot seek to frame \(frame)")
            }
            position = 0
            try skip(frame)
            return
        }
        position = frame
    }

    private func skip(_ frames: Int64) throws(AnnounceError) {
        var left = frames
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 4096 * info.channels * 4, alignment: 16)
        defer { scratch.deallocate() }
        while left > 0, case let got = try read(into: scratch, frames: Int(min(left, 4096)), as: .int32), got > 0 {
            left -= Int64(got)
        }
    }

    /// A STREAMINFO total of 0 means unknown: `LengthCount` counts it then.
    public var lengthIsExact: Bool { promisedFrames != nil }

    /// Decodes the whole stream on a fresh handle so `info.frames` is what plays.
    public func scanForExactLength() throws(AnnounceError) {
        let counter = try FLACDecoder(input: try cursor.input.reopen(), inOgg: info.container == .ogg)
        try counter.skip(Int64.max)
        info.frames = counter.position
        info.damage = counter.damage
    }

    // MARK: callbacks

    fileprivate func received(_ frame: UnsafePointer<FLAC__Frame>, _ buffer: UnsafePointer<UnsafePointer<Int32>?>)
        -> Bool
    {
        let header = frame.pointee.header
        let channels = Int(header.channels)
        let blocksize = Int(header.blocksize)
        // A frame in another layout than STREAMINFO's (a spliced file): stop there.
        guard channels == info.channels, Int(header.bits_per_sample) == bitsPerSample else { return false }
        if blocksize * channels > pendingCapacity {
            pending.deallocate()
            pendingCapacity = blocksize * channels
            pending = .allocate(capacity: pendingCapacity)
        }
        for channel in 0..<channels {
            guard let samples = buffer[channel] else { return false }
            for i in 0..<blocksize { pending[i * channels + channel] = samples[i] }
        }
        pendingFrames = blocksize
        pendingOffset = 0
        if damagePending { skippedDamage = true }  // damage only at the end is a truncation
        damagePending = false
        return true
    }

    fileprivate func receivedStreamInfo(_ metadata: UnsafePointer<FLAC__StreamMetadata>) {
        guard metadata.pointee.type == FLAC__METADATA_TYPE_STREAMINFO else { return }
        let stream = metadata.pointee.data.stream_info
        streamInfo = (
            Int(stream.sample_rate), Int(stream.channels), Int(stream.bits_per_sample), Int64(stream.total_samples)
        )
    }

    fileprivate func receivedError() { damagePending = true }
}

private func flacDecoder(_ client: UnsafeMutableRawPointer?) -> FLACDecoder {
    Unmanaged<FLACDecoder>.fromOpaque(client!).takeUnretainedValue()
}

private let flacWrite: FLAC__StreamDecoderWriteCallback = { _, frame, buffer, client in
    guard let frame, let buffer else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
    return flacDecoder(client).received(
        frame, UnsafeRawPointer(buffer).assumingMemoryBound(to: UnsafePointer<Int32>?.self))
        ? FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE : FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
}

private let flacMetadata: FLAC__StreamDecoderMetadataCallback = { _, metadata, client in
    if let metadata { flacDecoder(client).receivedStreamInfo(metadata) }
}

private let flacError: FLAC__StreamDecoderErrorCallback = { _, _, client in
    flacDecoder(client).receivedError()
}

// libFLAC's stream callbacks, over the decoder's cursor as its FILE ones are over stdio.

private let flacRead: FLAC__StreamDecoderReadCallback = { _, buffer, bytes, client in
    guard let buffer, let bytes, bytes.pointee > 0 else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
    let got = flacDecoder(client).cursor.read(into: buffer, count: bytes.pointee)
    bytes.pointee = max(0, got)
    return got < 0
        ? FLAC__STREAM_DECODER_READ_STATUS_ABORT
        : got == 0 ? FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM : FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
}

private let flacSeek: FLAC__StreamDecoderSeekCallback = { _, offset, client in
    flacDecoder(client).cursor.seek(Int64(offset), whence: SEEK_SET) < 0
        ? FLAC__STREAM_DECODER_SEEK_STATUS_ERROR
        : FLAC__STREAM_DECODER_SEEK_STATUS_OK
}

private let flacTell: FLAC__StreamDecoderTellCallback = { _, offset, client in
    offset?.pointee = FLAC__uint64(flacDecoder(client).cursor.position)
    return FLAC__STREAM_DECODER_TELL_STATUS_OK
}

private let flacLength: FLAC__StreamDecoderLengthCallback = { _, length, client in
    guard let bytes = flacDecoder(client).cursor.length() else { return FLAC__STREAM_DECODER_LENGTH_STATUS_ERROR }
    length?.pointee = FLAC__uint64(bytes)
    return FLAC__STREAM_DECODER_LENGTH_STATUS_OK
}

private let flacEOF: FLAC__StreamDecoderEofCallback = { _, client in
    flacDecoder(client).cursor.hitEnd ? 1 : 0
}
