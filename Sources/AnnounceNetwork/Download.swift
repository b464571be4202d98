#if canImport(Glibc)
import Glibc
#endif
import CCurl
import AnnounceModel
import AnnounceSystem

/// `announce play URL`: one URL's body, through libcurl, into a media file (`MediaWriter`).
/// libcurl's defaults stay: the system's CAs, the proxy variables (http_proxy, https_proxy,
/// no_proxy). Every failure is one line naming the URL: 66 when it cannot be read, the
/// writer's own errors (65 over its limit, 69 a full disk) as they are.
public enum Download {
    /// The schemes `play` downloads; a redirect may lead only to the first two (never from a
    /// server to a local file).
    public static let schemes = ["http", "https", "file"]
    /// Most redirects followed: more is a loop, or as good as one.
    public static let maxRedirects = 10

    /// The lowercased scheme of an argument written as a URL (`https` of `https://host/x`);
    /// nil for anything else, a path.
    public static func scheme(of argument: String) -> String? {
        guard let separator = argument.firstRange(of: "://") else { return nil }
        let scheme = argument[..<separator.lowerBound]
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
              scheme.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || "0123456789+.-".unicodeScalars.contains($0)) })
        else { return nil }
        return scheme.lowercased()
    }

    /// Downloads `url` into `writer` and returns the body's Content-Type, when the server gave
    /// one (a hint only: the bytes decide). `connectTimeout` bounds the connection (DNS
    /// included); `stallTimeout` ends a transfer that receives nothing for that long.
    public static func fetch(_ url: String, into writer: MediaWriter, connectTimeout: Double,
                             stallTimeout: Double) throws(AnnounceError) -> String? {
        if let problem = announce_curl_load() { throw .unavailable(String(cString: problem)) }
        guard let curl = announce_curl_easy_init() else { throw .internal("libcurl cannot start (curl_easy_init failed)") }
        defer { announce_curl_easy_cleanup(curl) }
        let transfer = Transfer(writer: writer)
        var message = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        let code = message.withUnsafeMutableBufferPointer { buffer -> CURLcode in
            let settings: [CURLcode] = [
                announce_curl_set_string(curl, CURLOPT_URL, url),
                announce_curl_set_pointer(curl, CURLOPT_ERRORBUFFER, buffer.baseAddress),
                announce_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, schemes.joined(separator: ",")),
                announce_curl_set_string(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
                announce_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 1),
                announce_curl_set_long(curl, CURLOPT_MAXREDIRS, maxRedirects),
                // 4xx and 5xx fail before their body (an error page) is stored.
                announce_curl_set_long(curl, CURLOPT_FAILONERROR, 1),
                announce_curl_set_long(curl, CURLOPT_NOSIGNAL, 1),
                announce_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(connectTimeout)),
                // Less than a byte a second for the stall timeout, from the request on (a server
                // that accepts and never answers too).
                announce_curl_set_long(curl, CURLOPT_LOW_SPEED_LIMIT, 1),
                announce_curl_set_long(curl, CURLOPT_LOW_SPEED_TIME, max(1, Int(stallTimeout.rounded(.up)))),
                // A Content-Length over the limit is refused before any of the body is read.
                announce_curl_set_offset(curl, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(writer.limit)),
                announce_curl_set_string(curl, CURLOPT_USERAGENT, "announce"),
                announce_curl_set_callback(curl, CURLOPT_WRITEFUNCTION, receiveBody),
                announce_curl_set_pointer(curl, CURLOPT_WRITEDATA, context),
                announce_curl_set_callback(curl, CURLOPT_HEADERFUNCTION, receiveHeader),
                announce_curl_set_pointer(curl, CURLOPT_HEADERDATA, context),
            ]
            if let failed = settings.first(where: { $0 != CURLE_OK }) { return failed }
            return announce_curl_easy_perform(curl)
        }
        if let failure = transfer.failure { throw failure }
        guard code == CURLE_OK else {
            throw failure(code, url: url, curl: curl, message: message, status: transfer.status,
                          tooLarge: transfer.writer.tooLarge, connectTimeout: connectTimeout, stallTimeout: stallTimeout)
        }
        var type: UnsafeMutablePointer<CChar>?
        guard announce_curl_info_string(curl, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK, let type else { return nil }
        return String(cString: type)
    }

    /// What a failed transfer says, in the user's words (a live stream's too): `message` is
    /// curl's error buffer, `status` the last response's status line.
    static func failure(_ code: CURLcode, url: String, curl: UnsafeMutableRawPointer, message: [CChar], status: String?,
                        tooLarge: @autoclosure () -> AnnounceError, connectTimeout: Double, stallTimeout: Double) -> AnnounceError {
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
            let reason = announce_curl_info_long(curl, CURLINFO_OS_ERRNO, &number) == CURLE_OK && number != 0
                ? systemErrorMessage(Int32(number)) : detail
            return cannot("cannot connect to \(host): \(reason)")
        case CURLE_OPERATION_TIMEDOUT:
            var connected = 0.0
            _ = announce_curl_info_double(curl, CURLINFO_CONNECT_TIME, &connected)
            return connected > 0 ? cannot("no data for \(seconds(stallTimeout)) (the server stalled)")
                : cannot("cannot connect to \(host) within \(seconds(connectTimeout))")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
             CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            return cannot("TLS with \(host) failed: \(detail)")
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

    private static func milliseconds(_ seconds: Double) -> Int { max(1, Int((seconds * 1000).rounded())) }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// What libcurl's callbacks share with `fetch`.
private final class Transfer {
    let writer: MediaWriter
    /// The writer's error, which ended the transfer (curl then says only "write error").
    var failure: AnnounceError?
    /// The last response's status and reason ("404 Not Found"): redirects come before it.
    var status: String?

    init(writer: MediaWriter) { self.writer = writer }

    static func from(_ context: UnsafeMutableRawPointer?) -> Transfer? {
        context.map { Unmanaged<Transfer>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// CURLOPT_WRITEFUNCTION: the body's bytes into the media file; 0 stops the transfer.
private let receiveBody: announce_curl_data_callback = { bytes, size, count, context in
    guard let transfer = Transfer.from(context) else { return 0 }
    do throws(AnnounceError) {
        try transfer.writer.append(UnsafeRawBufferPointer(start: bytes, count: size * count))
    } catch {
        transfer.failure = error
        return 0
    }
    return size * count
}

/// CURLOPT_HEADERFUNCTION: keeps each response's status line ("HTTP/1.1 404 Not Found").
private let receiveHeader: announce_curl_data_callback = { bytes, size, count, context in
    guard let transfer = Transfer.from(context), let bytes else { return size * count }
    let line = String(decoding: UnsafeRawBufferPointer(start: bytes, count: size * count), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        let status = line.split(separator: " ", maxSplits: 1).dropFirst().first ?? ""
        transfer.status = String(status).trimming(" \r\n")
    }
    return size * count
}
