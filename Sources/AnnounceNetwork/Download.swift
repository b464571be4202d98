import AnnounceModel
import AnnounceSystem
import CCurl

#if canImport(Glibc)
    import Glibc
#endif

/// `announce play URL`: one URL's body, through libcurl, into a sink (`ProgressiveDownload`).
/// libcurl's defaults stay: the system's CAs; the proxy is the caller's (`CurlTransfer`).
/// Every failure is one line naming the URL: 66 when it cannot be read, 65 over the limit, the
/// sink's own errors (69 a full disk) as they are.
public enum Download {
    /// Most redirects followed: more is a loop, or as good as one.
    public static let maxRedirects = 10

    /// Transfers `request.url`'s body into `sink` and returns the final response's head.
    /// `connectTimeout` bounds the connection (DNS included); `stallTimeout` ends a transfer that
    /// receives nothing for that long; a cancelled sink ends it within about a second.
    static func fetch(_ request: DownloadRequest, into sink: any DownloadSink) throws(AnnounceError) -> ResponseHead {
        if let problem = announce_curl_load() { throw .unavailable(String(cString: problem)) }
        guard let curl = announce_curl_easy_init() else {
            throw .internal("libcurl cannot start (curl_easy_init failed)")
        }
        defer { announce_curl_easy_cleanup(curl) }
        let transfer = Transfer(sink: sink, limit: request.limit)
        var headers: OpaquePointer? = nil
        for line in request.headerLines {
            headers = OpaquePointer(announce_curl_slist_append(UnsafeMutablePointer(headers), line))
        }
        defer { announce_curl_slist_free_all(UnsafeMutablePointer(headers)) }
        var message = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        let shared = CurlTransfer(
            url: request.url, protocols: Clip.urlSchemes.joined(separator: ","),
            connectTimeout: request.connectTimeout, stallTimeout: request.stallTimeout, proxies: request.proxies)
        let code = message.withUnsafeMutableBufferPointer { buffer -> CURLcode in
            var settings: [CURLcode] = [
                shared.apply(to: curl, errorBuffer: buffer.baseAddress),
                // A Content-Length over the limit is refused before any of the body is read.
                // (The whole body's limit also for a resume: a 200 to it is the whole body.)
                announce_curl_set_offset(curl, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.limit)),
                announce_curl_set_callback(curl, CURLOPT_WRITEFUNCTION, receiveBody),
                announce_curl_set_pointer(curl, CURLOPT_WRITEDATA, context),
                announce_curl_set_callback(curl, CURLOPT_HEADERFUNCTION, receiveHeader),
                announce_curl_set_pointer(curl, CURLOPT_HEADERDATA, context),
                announce_curl_set_progress(curl, checkCancelled),
                announce_curl_set_pointer(curl, CURLOPT_XFERINFODATA, context),
                announce_curl_set_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers))
            ]
            // A Range the server may ignore (a 200 then rewrites the body from its start).
            if request.resumeFrom > 0 {
                settings.append(announce_curl_set_string(curl, CURLOPT_RANGE, "\(request.resumeFrom)-"))
            }
            if let failed = settings.first(where: { $0 != CURLE_OK }) { return failed }
            return announce_curl_easy_perform(curl)
        }
        if let failure = transfer.failure { throw failure }
        if sink.isCancelled { throw .cannotOpen(path: request.url, reason: "cancelled") }
        // A range past the end is an answer, not a failure: the caller holds all of it, or the
        // file shrank (FAILONERROR spares a 416 only for libcurl's own resume, not CURLOPT_RANGE).
        if code == CURLE_HTTP_RETURNED_ERROR, request.resumeFrom > 0, transfer.head.status == 416 {
            return transfer.head
        }
        guard code == CURLE_OK else {
            throw failure(
                code, url: request.url, curl: curl, message: message, status: transfer.status,
                tooLarge: tooLarge(request.url, limit: transfer.limit),
                connectTimeout: request.connectTimeout, stallTimeout: request.stallTimeout)
        }
        // A body of no bytes (a 304, an empty file) still has a head.
        if !transfer.begun { try sink.begin(transfer.head) }
        return transfer.head
    }

    /// What a failed transfer says, in the user's words (a live stream's too): `message` is
    /// curl's error buffer, `status` the last response's status line.
    static func failure(
        _ code: CURLcode, url: String, curl: UnsafeMutableRawPointer, message: [CChar], status: String?,
        tooLarge: @autoclosure () -> AnnounceError, connectTimeout: Double, stallTimeout: Double
    ) -> AnnounceError {
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let detail = text.isEmpty ? String(cString: announce_curl_easy_strerror(code)) : text
        var effective: UnsafeMutablePointer<CChar>?
        _ = announce_curl_info_string(curl, CURLINFO_EFFECTIVE_URL, &effective)
        let host = Self.host(of: effective.map { String(cString: $0) } ?? url)
        func cannot(_ reason: String) -> AnnounceError { .cannotOpen(path: url, reason: reason) }
        switch code {
        case CURLE_HTTP_RETURNED_ERROR:
            return cannot(status.map { "HTTP \($0)" } ?? detail)
        case CURLE_FILESIZE_EXCEEDED:
            return tooLarge()
        case CURLE_TOO_MANY_REDIRECTS:
            return cannot("more than \(maxRedirects) redirects (a redirect loop)")
        case CURLE_COULDNT_RESOLVE_HOST:
            return cannot("cannot resolve host \(host)")
        case CURLE_COULDNT_RESOLVE_PROXY:
            return cannot("cannot resolve the proxy: \(detail)")
        case CURLE_COULDNT_CONNECT:
            var number = 0
            let reason =
                announce_curl_info_long(curl, CURLINFO_OS_ERRNO, &number) == CURLE_OK && number != 0
                ? systemErrorMessage(Int32(number)) : detail
            return cannot("cannot connect to \(host): \(reason)")
        case CURLE_OPERATION_TIMEDOUT:
            var connected = 0.0
            _ = announce_curl_info_double(curl, CURLINFO_CONNECT_TIME, &connected)
            return connected > 0
                ? cannot("no data for \(seconds(stallTimeout)) (the server stalled)")
                : cannot("cannot connect to \(host) within \(seconds(connectTimeout))")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            return cannot("TLS with \(host) failed: \(detail)")
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return cannot("\(brokeOff) (\(detail))")
        case CURLE_FILE_COULDNT_READ_FILE:
            return cannot("cannot read the file (missing, or no permission)")
        default:
            return cannot(detail)
        }
    }

    /// The host (and port) of a URL, for messages: between `://` and the path, without a user.
    static func host(of url: String) -> String {
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return String(authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority)
    }

    /// How a transfer that the connection's end cut short is described.
    static let brokeOff = "the connection broke off"

    /// The transfer was cut short by the connection (not refused, not stalled): worth another try.
    static func isBreak(_ error: AnnounceError) -> Bool {
        if case .cannotOpen(_, let reason) = error { reason.hasPrefix(brokeOff) } else { false }
    }

    /// More than `limit` bytes (65): refused from the Content-Length, or cut off.
    static func tooLarge(_ url: String, limit: Int) -> AnnounceError {
        let most = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        return .undecodable(path: url, reason: "more than \(most), the most announce downloads for one clip")
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// What libcurl's callbacks share with `fetch`.
private final class Transfer {
    let sink: any DownloadSink
    let limit: Int
    /// The sink's error, which ended the transfer (curl then says only "write error").
    var failure: AnnounceError?
    /// The response being received: redirects come before the final one.
    var head = ResponseHead()
    /// The status and reason of the last response ("404 Not Found"), for messages.
    var status: String?
    /// The sink has the head.
    var begun = false

    init(sink: any DownloadSink, limit: Int) {
        self.sink = sink
        self.limit = limit
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> Transfer? {
        context.map { Unmanaged<Transfer>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// CURLOPT_WRITEFUNCTION: the body's bytes into the sink, after the head; 0 stops the transfer.
private let receiveBody: announce_curl_data_callback = { bytes, size, count, context in
    guard let transfer = Transfer.from(context) else { return 0 }
    do throws(AnnounceError) {
        if !transfer.begun {
            transfer.begun = true
            try transfer.sink.begin(transfer.head)
        }
        try transfer.sink.append(UnsafeRawBufferPointer(start: bytes, count: size * count))
    } catch {
        transfer.failure = error
        return 0
    }
    return size * count
}

/// CURLOPT_HEADERFUNCTION: each response's status line and the header fields a body needs.
private let receiveHeader: announce_curl_data_callback = { bytes, size, count, context in
    guard let transfer = Transfer.from(context), let bytes else { return size * count }
    let line = String(decoding: UnsafeRawBufferPointer(start: bytes, count: size * count), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        let status = line.split(separator: " ", maxSplits: 1).dropFirst().first ?? ""
        transfer.status = String(status).trimming(" \r\n")
        transfer.head = ResponseHead(status: Int(status.prefix(3)) ?? 0)
    } else {
        transfer.head.take(headerLine: line)
    }
    return size * count
}

/// CURLOPT_XFERINFOFUNCTION: ends the transfer once the sink is cancelled (a stalled one too).
private let checkCancelled: announce_curl_progress_callback = { context, _, _, _, _ in
    Transfer.from(context)?.sink.isCancelled == true ? 1 : 0
}
