import AnnounceModel
import AnnounceSystem
import CMpg123

#if canImport(Glibc)
    import Glibc
#endif

/// MPEG audio (MP3, MP2) through libmpg123: float output, gapless, ID3v2 skipped, exact seeking.
public final class MPG123Decoder: AudioDecoder {
    public var path: String { cursor.input.name }
    public private(set) var info: AudioFileInfo
    public let readableFormats: Set<SampleFormat> = [.float32]
    public var truncationWarning: String? { damage?.description }
    private var damage: Damage?
    private let handle: OpaquePointer
    /// What libmpg123 reads through; it lives as long as the handle.
    private let cursor: InputCursor
    /// Frames the Info/Xing header promised; nil when the stream has no such header.
    private let promisedFrames: Int64?
    private var position: Int64 = 0
    /// Set at a format change or a decode error: later reads return 0 until a seek,
    /// so audio in another format is never played as if it were this one.
    private var stoppedEarly = false
    /// Between a change to another format and the change back: what decodes is skipped.
    private var inOtherFormat = false

    private static let libraryReady: Bool = mpg123_init() == Int32(MPG123_OK.rawValue)

    /// `skipsLeadingDamage`: the stream starts after junk or damage.
    /// A live stream's segment: `fd` a pipe read once from where it is (`PipeInput`); taken.
    convenience init(fileName: FileName, fd: Int32, skipsLeadingDamage: Bool = false) throws(AnnounceError) {
        try self.init(input: PipeInput(fd: fd, name: fileName.text), skipsLeadingDamage: skipsLeadingDamage)
    }

    init(input: any ByteInput, skipsLeadingDamage: Bool = false) throws(AnnounceError) {
        cursor = InputCursor(input)
        damage = skipsLeadingDamage ? .skipped : nil
        var err: Int32 = 0
        guard Self.libraryReady, let handle = mpg123_new(nil, &err) else {
            throw .internal("libmpg123 did not initialise: \(String(cString: mpg123_plain_strerror(err)))")
        }
        self.handle = handle
        do {
            (info, promisedFrames) = try Self.open(handle, cursor: cursor)
            info.damage = damage
        } catch {
            mpg123_delete(handle)
            throw error
        }
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
    }

    private static func open(_ h: OpaquePointer, cursor: InputCursor) throws(AnnounceError) -> (AudioFileInfo, Int64?) {
        let input = cursor.input
        let path = input.name
        var flags = Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue | MPG123_SKIP_ID3V2.rawValue)
        // Not the end of a download still arriving (an ID3v1 tag is skipped where it comes);
        // still seekable, as reads wait for the bytes.
        if input.arrivesWhileRead { flags |= Int(MPG123_NO_PEEK_END.rawValue | MPG123_FORCE_SEEKABLE.rawValue) }
        _ = announce_mpg123_set_flag(h, flags)
        // Resync across damaged data however long (the default gives up after 1 KiB).
        _ = announce_mpg123_set_integer(h, MPG123_RESYNC_LIMIT, -1)
        // Layer III needs its bit reservoir refilled after a seek; mpg123's default of
        // 4 frames leaves low-bitrate VBR streams wrong for ~20 ms after --start.
        _ = announce_mpg123_set_integer(h, MPG123_PREFRAMES, 20)
        // Only float output, at any rate and channel count the stream has.
        mpg123_format_none(h)
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        for i in 0..<rateCount {
            mpg123_format(
                h, rates![i], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_FLOAT_32.rawValue))
        }
        guard mpg123_replace_reader_handle(h, mpg123Read, mpg123Seek, nil) == Int32(MPG123_OK.rawValue),
            mpg123_open_handle(h, Unmanaged.passUnretained(cursor).toOpaque()) == Int32(MPG123_OK.rawValue)
        else {
            try cursor.check()
            throw .undecodable(path: path, reason: "not decodable MPEG audio (\(errorText(h)))")
        }
        // The length estimate of a stream without an Info header comes from the size.
        if input.arrivesWhileRead, let length = input.length { _ = mpg123_set_filesize(h, off_t(length)) }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(h, &rate, &channels, &encoding) == Int32(MPG123_OK.rawValue) else {
            try cursor.check()
            throw .undecodable(path: path, reason: "no MPEG audio frames found (\(errorText(h)))")
        }
        try validate(channels: Int(channels), sampleRate: rate, path: path)
        var frameInfo = mpg123_frameinfo2()
        var codec = Codec.mpeg(nil)
        if mpg123_info2(h, &frameInfo) == Int32(MPG123_OK.rawValue) {
            // libmpg123 says VBR for any Info/Xing header; LAME writes "Info" for CBR streams.
            // Without one, the first frames' bitrates tell (libmpg123's flag is the first frame's,
            // and after damage a false sync's); `scanForExactLength` checks the whole file's average.
            let leading = try leadingFrames(input)
            let isCBR =
                leading?.tag.map { $0 == "Info" } ?? leading?.sameBitrate
                ?? (frameInfo.vbr == Int32(MPG123_CBR.rawValue))
            let bitrate: MPEGAudio.Bitrate =
                isCBR
                ? .constant(kbps: Int(frameInfo.bitrate))
                : frameInfo.vbr == Int32(MPG123_ABR.rawValue) ? .average : .variable
            codec = .mpeg(
                MPEGAudio(
                    version: ["1", "2", "2.5"][Int(frameInfo.version) % 3], layer: Int(frameInfo.layer),
                    bitrate: bitrate))
        }
        var delay = 0
        var ignored = 0.0
        let hasInfoTag =
            mpg123_getstate2(h, Int32(MPG123_ENC_DELAY.rawValue), &delay, &ignored) == Int32(MPG123_OK.rawValue)
            && delay >= 0
        let length = Int64(mpg123_length(h))
        let frames: Int64? = length > 0 ? length : nil
        let info = AudioFileInfo(
            container: .mp3, codec: codec, sampleRate: rate, channels: Int(channels),
            frames: frames, exactSampleFormat: .float32)
        return (info, hasInfoTag ? frames : nil)
    }

    /// An Info/Xing header counts the frames; without one, libmpg123 estimates from the first.
    public var lengthIsExact: Bool { promisedFrames != nil }

    /// Reads the whole stream's frame headers (no decoding) so the length is exact
    /// even without an Info header. Costs a pass over the file; `info` uses it.
    /// When the scan disagrees with the Info header the file is damaged and
    /// mpg123's gapless trimming no longer matches its count, so the frames are
    /// counted by decoding: `info` then says exactly what `play` will play.
    public func scanForExactLength() throws(AnnounceError) {
        guard mpg123_scan(handle) == Int32(MPG123_OK.rawValue) else {
            try cursor.check()
            throw .undecodable(path: path, reason: "scan failed (\(Self.errorText(handle)))")
        }
        let length = Int64(mpg123_length(handle))
        // No length at all (headers and no frame, as in a stub) is counted the same way.
        if length <= 0 || promisedFrames.map({ length != $0 }) == true {
            // The scan also switched this handle's gapless trimming off: count on a fresh one.
            let fresh = try MPG123Decoder(input: try cursor.input.reopen(), skipsLeadingDamage: damage == .skipped)
            let chunk = 4096
            let scratch = UnsafeMutableRawPointer.allocate(byteCount: chunk * info.channels * 4, alignment: 16)
            defer { scratch.deallocate() }
            var counted: Int64 = 0
            while case let got = try fresh.read(into: scratch, frames: chunk, as: .float32), got > 0 {
                counted += Int64(got)
            }
            info.frames = counted
            info.damage = fresh.damage
        } else {
            info.frames = length
        }
        // A damaged file's size counts bytes that never decode: its average bitrate says nothing.
        if try Self.leadingFrames(cursor.input)?.tag == nil, info.damage == nil, let frames = info.frames, frames > 0 {
            try noteVBR(frames: frames)
        }
        try seek(toFrame: position)
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int, as format: SampleFormat) throws(AnnounceError)
        -> Int
    {
        precondition(format == .float32, "MPG123Decoder reads float32 only")
        if stoppedEarly { return 0 }
        let bytesPerFrame = info.channels * 4
        var filled = 0
        let wanted = frames * bytesPerFrame
        while filled < wanted {
            var done = 0
            let status = mpg123_read(handle, buffer.advanced(by: filled), wanted - filled, &done)
            try cursor.check()
            if !inOtherFormat { filled += done }
            if status == Int32(MPG123_OK.rawValue) { continue }
            if status == Int32(MPG123_DONE.rawValue) {
                // Headers only (an Info frame and nothing after it): mpg123 decodes nothing either.
                if position == 0 && filled == 0 && !inOtherFormat {
                    throw .undecodable(path: path, reason: DecoderRegistry.noAudioFrames)
                }
                if inOtherFormat {
                    damage = damage ?? .formatChange
                }
                noteEnd(at: position + Int64(filled / bytesPerFrame))
                break
            }
            if status == Int32(MPG123_NEW_FORMAT.rawValue) {
                // Audio in another format is never played as this one. It is skipped: a false
                // sync in damaged data is followed by this format again; a second file joined
                // on (a Frankenstein file) lasts to the end.
                let wasOther = inOtherFormat
                inOtherFormat = !isOwnFormat()
                if wasOther && !inOtherFormat { damage = damage ?? .skipped }
                continue
            }
            if filled > 0 || position > 0 {
                damage = damage ?? .stopped("decoding stopped early: \(Self.errorText(handle))")
                stoppedEarly = true
                break
            }
            throw .undecodable(path: path, reason: "not decodable MPEG audio (\(Self.errorText(handle)))")
        }
        let got = filled / bytesPerFrame
        position += Int64(got)
        return got
    }

    private func isOwnFormat() -> Bool {
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        return mpg123_getformat(handle, &rate, &channels, &encoding) == Int32(MPG123_OK.rawValue)
            && rate == info.sampleRate && Int(channels) == info.channels
    }

    private func noteEnd(at frames: Int64) {
        if let promised = promisedFrames, frames < promised, damage == nil {
            damage = .truncated(played: frames, promised: promised, sampleRate: info.sampleRate)
        }
    }

    public func seek(toFrame frame: Int64) throws(AnnounceError) {
        let result = mpg123_seek(handle, off_t(frame), SEEK_SET)
        guard result >= 0 else {
            try cursor.check()
            throw .undecodable(path: path, reason: "cannot seek to frame \(frame): \(Self.errorText(handle))")
        }
        position = Int64(result)
        stoppedEarly = false
        inOtherFormat = false
    }

    /// Without an Info/Xing/VBRI header, "CBR" came from the first frame's bitrate alone: a stream
    /// whose average bitrate is another (beyond tags and rounding, 3%) is VBR.
    private func noteVBR(frames: Int64) throws(AnnounceError) {
        guard case .mpeg(var audio?) = info.codec, case .constant(let kbps) = audio.bitrate else { return }
        let header = try cursor.input.bytes(at: 0, count: 10)
        guard header.count == 10 else { return }
        let size = try cursor.input.settledLength()
        let tag = SniffedContainer.id3v2TagLength(header)
        let seconds = Double(frames) / Double(info.sampleRate)
        let average = Double(Int(size) - tag) * 8 / seconds / 1000
        if abs(average - Double(kbps)) > Double(kbps) * 0.03 {
            audio.bitrate = .variable
            info.codec = .mpeg(audio)
        }
    }

    /// The stream's first frames (after any ID3v2 tag and junk): "Info", "Xing" or "VBRI" when
    /// the first is such a header, and whether the next ones share one bitrate.
    private static func leadingFrames(_ input: any ByteInput) throws(AnnounceError) -> (
        tag: String?, sameBitrate: Bool
    )? {
        var bytes = try input.bytes(at: 0, count: 16384)
        guard bytes.count >= 64 else { return nil }
        if bytes.starts(with: Array("ID3".utf8)) {
            bytes = try input.bytes(at: Int64(SniffedContainer.id3v2TagLength(bytes)), count: 16384)
            guard bytes.count >= 64 else { return nil }
        }
        let atEnd = bytes.count < 16384
        // Where frames chain: a lone header at the start may be damage (mpg123 resyncs past it).
        guard let frame = SniffedContainer.mpegStreamStart(bytes, isWholeFile: atEnd), frame + 44 <= bytes.count else {
            return nil
        }
        // Xing/Info sits after the side information (9 to 32 bytes), VBRI at 32: search there.
        let tag = (frame + 4...frame + 40).lazy.map { String(decoding: bytes[$0..<$0 + 4], as: UTF8.self) }
            .first { $0 == "Info" || $0 == "Xing" || $0 == "VBRI" }
        // The audio frames after it, as far as this read goes (up to 16).
        var bitrates = Set<Int>()
        var at = frame
        var count = 0
        while count < 17, let header = SniffedContainer.mpegFrame(bytes, at: at) {
            if count > 0 || tag == nil { bitrates.insert(header.bitrateIndex) }
            at += header.length
            count += 1
        }
        return (tag, count >= SniffedContainer.chainedFrames && bitrates.count == 1)
    }

    private static func errorText(_ h: OpaquePointer) -> String {
        String(cString: mpg123_strerror(h))
    }
}

// libmpg123's reader callbacks (`mpg123_replace_reader_handle`): the handle is the decoder's cursor.

private func handleCursor(_ handle: UnsafeMutableRawPointer?) -> InputCursor {
    Unmanaged<InputCursor>.fromOpaque(handle!).takeUnretainedValue()
}

private let mpg123Read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int = {
    handle, buffer, count in
    guard let buffer else { return -1 }
    return handleCursor(handle).read(into: buffer, count: count)
}

private let mpg123Seek: @convention(c) (UnsafeMutableRawPointer?, off_t, Int32) -> off_t = { handle, offset, whence in
    off_t(handleCursor(handle).seek(Int64(offset), whence: whence))
}
