import AnnounceModel
import CCurl

/// The libcurl options every transfer shares, downloads (`Download`) and live streams
/// (`StreamConnection`) alike, so the two cannot drift apart: they had, and a stream went
/// through the daemon's proxy instead of the caller's.
struct CurlTransfer {
    var url: String
    /// Schemes the first request may use (`CURLOPT_PROTOCOLS_STR`); redirects only http(s).
    var protocols: String
    var connectTimeout: Double
    var stallTimeout: Double
    /// The caller's proxy variables (`Clip.proxyVariables`): they alone choose the proxy (none
    /// when empty). nil only outside the daemon: libcurl then reads the process's.
    var proxies: [String: String]?

    /// Sets the shared options on `curl`, errors into `errorBuffer` (CURL_ERROR_SIZE + 1);
    /// the first failure, or CURLE_OK.
    func apply(to curl: UnsafeMutableRawPointer, errorBuffer: UnsafeMutablePointer<CChar>?) -> CURLcode {
        var codes: [CURLcode] = [
            announce_curl_set_string(curl, CURLOPT_URL, url),
            announce_curl_set_pointer(curl, CURLOPT_ERRORBUFFER, errorBuffer),
            announce_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, protocols),
            announce_curl_set_string(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
            announce_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 1),
            announce_curl_set_long(curl, CURLOPT_MAXREDIRS, Download.maxRedirects),
            // 4xx and 5xx fail before their body (an error page) is taken for audio.
            announce_curl_set_long(curl, CURLOPT_FAILONERROR, 1),
            announce_curl_set_long(curl, CURLOPT_NOSIGNAL, 1),
            announce_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int((connectTimeout * 1000).rounded()))),
            // Less than a byte a second for the stall timeout, from the request on (a server
            // that accepts and never answers too).
            announce_curl_set_long(curl, CURLOPT_LOW_SPEED_LIMIT, 1),
            announce_curl_set_long(curl, CURLOPT_LOW_SPEED_TIME, max(1, Int(stallTimeout.rounded(.up)))),
            announce_curl_set_string(curl, CURLOPT_USERAGENT, "announce")
        ]
        if let proxies {
            codes.append(
                announce_curl_set_string(
                    curl, CURLOPT_PROXY, Self.proxy(for: Clip.urlScheme(of: url) ?? "", in: proxies)))
            codes.append(
                announce_curl_set_string(curl, CURLOPT_NOPROXY, proxies["no_proxy"] ?? proxies["NO_PROXY"] ?? ""))
        }
        return codes.first { $0 != CURLE_OK } ?? CURLE_OK
    }

    /// The proxy the caller's variables name for `scheme`, curl's way: `http_proxy` (lowercase
    /// only: a CGI program's HTTP_PROXY is a request header), `https_proxy` or `HTTPS_PROXY`,
    /// else `all_proxy` or `ALL_PROXY`; "" for none (the daemon's own variables never count).
    static func proxy(for scheme: String, in variables: [String: String]) -> String {
        let names = scheme == "http" ? ["http_proxy"] : [scheme + "_proxy", scheme.uppercased() + "_PROXY"]
        return (names + ["all_proxy", "ALL_PROXY"]).lazy.compactMap { variables[$0] }.first { !$0.isEmpty } ?? ""
    }
}
