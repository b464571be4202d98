import AnnounceModel
import AnnounceSystem
import CCurl
import CPosix

#if canImport(Glibc)
    import Glibc
#endif

/// One connection of a live stream (`StreamReceiver`): the request, the response's headers,
/// and its body on its way into segments: ICY metadata taken out (`IcyDemuxer`), a chained
/// Ogg stream cut at each new link (`OggChain`), each segment's first bytes held until
/// `LiveSegment.headLength` of them are there, then everything written into its pipe, waiting
/// while the pipe is full (the decoder reads at the pace it plays).
final class StreamConnection {
    enum Ending {
        /// A body of known length (or chunked, and ended as such) came whole: the stream is over.
        case ended
        /// The connection failed or closed: the reason, as Download words it.
        case dropped(AnnounceError)
    }

    private let receiver: StreamReceiver
    /// When the body began: the connection gives audio (as far as the network can tell).
    private(set) var audioSince: Double?

    // The last response's headers (a redirect's are replaced by the next response's).
    private var status: String?
    private var contentType: String?
    private var contentLength: Int?
    private var chunked = false
    private var metaint: String?

    private var icy: IcyDemuxer?
    /// The server sends ICY metadata: its titles, not an Ogg link's comments, name what plays.
    private var icyTitles = false
    private var chain: OggChain?
    /// The body's first bytes, until they say whether it is Ogg.
    private var opening: [UInt8] = []
    private var kindKnown = false
    private var segment: Segment?
    private var segments = 0
    /// The decoder closed its end: this connection's bytes are of no use.
    private var unread = false

    /// One segment's pipe, and its first bytes until handed over.
    private struct Segment {
        let readFD: Int32
        let writeFD: Int32
        var head: [UInt8] = []
        var delivered = false
    }

    /// Enough to cushion the network: 1.3 s of 1.5 Mbit/s, 16 s of 128 kbit/s.
    private static let pipeBytes: Int32 = 256 << 10
    /// F_SETPIPE_SZ (linux/fcntl.h), which Glibc's Swift module does not export.
    private static let setPipeSize: Int32 = 1031

    init(receiver: StreamReceiver) {
        self.receiver = receiver
    }

    /// Makes the request and passes the body on until the connection ends or the receiver stops.
    func run(_ multi: UnsafeMutableRawPointer) -> Ending {
        let url = receiver.url
        let settings = receiver.settings
        guard let curl = announce_curl_easy_init() else {
            return .dropped(.internal("libcurl cannot start (curl_easy_init failed)"))
        }
        defer { announce_curl_easy_cleanup(curl) }
        // Ask for ICY metadata; SHOUTcast answers "ICY 200 OK" instead of an HTTP status line.
        let headers = announce_curl_slist_append(nil, "Icy-MetaData: 1")
        let aliases = announce_curl_slist_append(nil, "ICY 200 OK")
        defer {
            announce_curl_slist_free_all(headers)
            announce_curl_slist_free_all(aliases)
        }
        var message = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let context = Unmanaged.passUnretained(self).toOpaque()
        var done: Int32 = 0
        var code = CURLE_OK
        message.withUnsafeMutableBufferPointer { buffer in
            let shared = CurlTransfer(
                url: url, protocols: "http,https", connectTimeout: settings.connectTimeout,
                stallTimeout: settings.stallTimeout, proxies: receiver.proxies)
            let settingsApplied: [CURLcode] = [
                shared.apply(to: curl, errorBuffer: buffer.baseAddress),
                announce_curl_set_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)),
                announce_curl_set_pointer(curl, CURLOPT_HTTP200ALIASES, UnsafeMutableRawPointer(aliases)),
                announce_curl_set_callback(curl, CURLOPT_WRITEFUNCTION, receiveStreamBody),
                announce_curl_set_pointer(curl, CURLOPT_WRITEDATA, context),
                announce_curl_set_callback(curl, CURLOPT_HEADERFUNCTION, receiveStreamHeader),
                announce_curl_set_pointer(curl, CURLOPT_HEADERDATA, context)
            ]
            if let failed = settingsApplied.first(where: { $0 != CURLE_OK }) {
                (done, code) = (1, failed)
                return
            }
            guard announce_curl_multi_add_handle(multi, curl) == CURLM_OK else {
                (done, code) = (1, CURLE_FAILED_INIT)
                return
            }
            defer { _ = announce_curl_multi_remove_handle(multi, curl) }
            var stop = curl_waitfd(fd: receiver.stopSignal.fd, events: Int16(CURL_WAIT_POLLIN), revents: 0)
            while !receiver.isStopped {
                var running: Int32 = 0
                guard announce_curl_multi_perform(multi, &running) == CURLM_OK else { break }
                if running == 0 { break }
                _ = announce_curl_multi_poll(multi, &stop, 1, 1000)
            }
            done = announce_curl_multi_done(multi, &code)
        }
        finishBody()
        if unread { return .dropped(.cannotOpen(path: url, reason: "its audio stopped decoding")) }
        guard done != 0 else { return .dropped(.cannotOpen(path: url, reason: "the transfer stopped")) }
        guard code == CURLE_OK else {
            return .dropped(
                Download.failure(
                    code, url: url, curl: curl, message: message, status: status,
                    tooLarge: .internal("a stream has no size limit"),
                    connectTimeout: settings.connectTimeout, stallTimeout: settings.stallTimeout))
        }
        // A live server closes an endless body: that is a drop, not the end.
        return contentLength != nil || chunked
            ? .ended : .dropped(.cannotOpen(path: url, reason: "the server closed the stream"))
    }

    /// One header line; a status line starts a response's headers afresh.
    fileprivate func header(_ line: String) {
        let text = line.trimming(" \r\n")
        if text.hasPrefix("HTTP/") || text.hasPrefix("ICY ") {
            status = text.split(separator: " ", maxSplits: 1).dropFirst().first.map(String.init)
            (contentType, contentLength, chunked, metaint) = (nil, nil, false, nil)
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let value = String(text[text.index(after: colon)...]).trimming(" \t")
        switch text[..<colon].lowercased() {
        case "content-type": contentType = String(value.prefix { $0 != ";" }).trimming(" \t").lowercased()
        case "content-length": contentLength = Int(value)
        case "transfer-encoding": chunked = value.lowercased().contains("chunked")
        case "icy-metaint": metaint = value
        default: break
        }
    }

    /// Body bytes as they come; false stops the transfer (stopped, or nobody reads them).
    fileprivate func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if audioSince == nil {
            audioSince = SystemClock.monotonic()
            icy = IcyDemuxer(header: metaint)
            icyTitles = icy != nil
        }
        do throws(Stop) {
            if var demuxer = icy {
                icy = nil  // moved out, so feeding it copies nothing
                defer { icy = demuxer }
                try demuxer.feed(bytes) { (piece) throws(Stop) in
                    switch piece {
                    case .audio(let audio): try self.audio(audio)
                    case .title(let title): receiver.noteTitle(title)
                    }
                }
            } else {
                try audio(bytes)
            }
        } catch {
            return false
        }
        return true
    }

    private struct Stop: Error {}

    /// Audio bytes, ICY metadata gone: their first four say whether the OggChain follows them.
    private func audio(_ bytes: UnsafeRawBufferPointer) throws(Stop) {
        guard kindKnown else {
            let taken = min(4 - opening.count, bytes.count)
            opening.append(contentsOf: bytes.prefix(taken))
            guard opening.count == 4 else { return }
            try decideKind()
            try pass(UnsafeRawBufferPointer(rebasing: bytes[taken...]))
            return
        }
        try pass(bytes)
    }

    private func decideKind() throws(Stop) {
        kindKnown = true
        if opening.starts(with: Array("OggS".utf8)) { chain = OggChain() }
        let opened = opening
        let passed = opened.withUnsafeBytes { bytes in Result { () throws(Stop) in try pass(bytes) } }
        try passed.get()
    }

    private func pass(_ bytes: UnsafeRawBufferPointer) throws(Stop) {
        guard var links = chain else { return try write(bytes) }
        chain = nil
        defer { chain = links }
        try links.feed(bytes) { (piece) throws(Stop) in
            switch piece {
            case .bytes(let bytes): try write(bytes)
            case .newStream: endSegment()
            // ICY metadata, when the server sends it, names what plays; else each link's comments do.
            case .title(let title): if !icyTitles { receiver.noteTitle(title) }
            }
        }
    }

    /// Into the current segment (a new one if none is open): held while its head fills, then
    /// written, waiting for room in the pipe.
    private func write(_ bytes: UnsafeRawBufferPointer) throws(Stop) {
        if bytes.isEmpty { return }
        if segment == nil { segment = try openSegment() }
        guard var open = segment else { return }
        if !open.delivered {
            let taken = min(LiveSegment.headLength - open.head.count, bytes.count)
            open.head.append(contentsOf: bytes.prefix(taken))
            segment = open
            if open.head.count < LiveSegment.headLength { return }
            try deliver()
            return try write(UnsafeRawBufferPointer(rebasing: bytes[taken...]))
        }
        try writeAll(bytes, to: open.writeFD)
    }

    private func openSegment() throws(Stop) -> Segment {
        var ends: [Int32] = [0, 0]
        guard announce_cloexec_pipe(&ends) == 0 else { throw Stop() }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        _ = fcntl(ends[1], Self.setPipeSize, Self.pipeBytes)  // the default 64 KiB is fine too
        segments += 1
        var segment = Segment(readFD: ends[0], writeFD: ends[1])
        segment.head.reserveCapacity(LiveSegment.headLength)
        return segment
    }

    /// Hands the segment to the reader, then writes its head into the pipe.
    private func deliver() throws(Stop) {
        guard var open = segment, !open.delivered else { return }
        open.delivered = true
        segment = open
        receiver.deliver(
            LiveSegment(head: open.head, fd: open.readFD, contentType: contentType, startsConnection: segments == 1))
        let written = open.head.withUnsafeBytes { head in
            Result { () throws(Stop) in try writeAll(head, to: open.writeFD) }
        }
        try written.get()
    }

    /// Closes the segment's writing end: its reader sees the end of its bytes.
    private func endSegment() {
        guard segment != nil else { return }
        try? deliver()
        if let open = segment { close(open.writeFD) }
        segment = nil
    }

    /// The transfer ended: what is held goes out, and the segment ends.
    private func finishBody() {
        if !kindKnown, !opening.isEmpty { try? decideKind() }
        endSegment()
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) throws(Stop) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
                continue
            }
            let code = errno
            guard written < 0, code == EAGAIN || code == EINTR else {
                unread = code == EPIPE
                throw Stop()
            }
            var waits = [
                pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                pollfd(fd: receiver.stopSignal.fd, events: Int16(POLLIN), revents: 0)
            ]
            _ = poll(&waits, 2, -1)
            if waits[1].revents != 0 || receiver.isStopped { throw Stop() }
        }
    }
}

/// CURLOPT_WRITEFUNCTION of a live stream; 0 stops the transfer.
private let receiveStreamBody: announce_curl_data_callback = { bytes, size, count, context in
    guard let context, let bytes else { return 0 }
    let connection = Unmanaged<StreamConnection>.fromOpaque(context).takeUnretainedValue()
    return connection.body(UnsafeRawBufferPointer(start: bytes, count: size * count)) ? size * count : 0
}

/// CURLOPT_HEADERFUNCTION of a live stream.
private let receiveStreamHeader: announce_curl_data_callback = { bytes, size, count, context in
    guard let context, let bytes else { return size * count }
    let connection = Unmanaged<StreamConnection>.fromOpaque(context).takeUnretainedValue()
    connection.header(String(decoding: UnsafeRawBufferPointer(start: bytes, count: size * count), as: UTF8.self))
    return size * count
}
