import AnnounceModel
import Testing

@testable import AnnounceNetwork

/// What `play` takes for a URL, and the config keys of its downloads.
@Suite struct DownloadSettingsTests {
    @Test(arguments: [
        ("https://host/x.mp3", "https"), ("HTTP://host/x", "http"), ("file:///tmp/x.wav", "file"), ("ftp://h/x", "ftp"),
        ("svn+ssh://h/x", "svn+ssh")
    ])
    func urlsHaveTheirScheme(argument: String, scheme: String) {
        #expect(Clip.urlScheme(of: argument) == scheme)
    }

    @Test func pathsAreNoURLs() {
        for path in ["/tmp/x.wav", "x.wav", "-", "dir/a://b", "://x", "1http://x", "", "chime"] {
            #expect(Clip.urlScheme(of: path) == nil, "\(path)")
        }
    }

    @Test func theHostOfAURLLeavesTheUserOut() {
        #expect(Download.host(of: "https://user:secret@nas.local:8443/a/b?c") == "nas.local:8443")
        #expect(Download.host(of: "http://127.0.0.1/x") == "127.0.0.1")
    }

    @Test func timeoutsComeFromTheConfigFileWithinTheirRange() {
        let (set, none) = UserConfiguration.parse("connect-timeout = 3s\nstall-timeout = 1m\n", name: "c")
        #expect(none.isEmpty && set.connectTimeout == 3 && set.stallTimeout == 60)
        let defaults = UserConfiguration()
        #expect(defaults.connectTimeout == 10 && defaults.stallTimeout == 30)
        let (bad, warnings) = UserConfiguration.parse("connect-timeout = 0s\nstall-timeout = forever\n", name: "c")
        #expect(bad.connectTimeout == 10 && bad.stallTimeout == 30)
        #expect(
            warnings == [
                "c:1: connect-timeout must be a time of 1s to 10m, like 30s, not '0s'",
                "c:2: stall-timeout must be a time of 1s to 10m, like 30s, not 'forever'"
            ])
    }

    @Test func theDownloadSectionSetsTheCache() {
        let (set, none) = UserConfiguration.parse("[download]\ncache = yes\ncache-size = 1G\n", name: "c")
        #expect(none.isEmpty && set.cacheDownloads && set.downloadCacheBytes == 1 << 30)
        #expect(!UserConfiguration().cacheDownloads && UserConfiguration().downloadCacheBytes == 256 << 20)
        let (_, warnings) = UserConfiguration.parse("[download]\ncache = maybe\nsize = 1\n", name: "c")
        #expect(
            warnings == [
                "c:2: cache must be yes or no, not 'maybe'",
                "c:3: unknown key 'size' in [download] (known: cache, cache-size)"
            ])
    }

    @Test func theCallersVariablesAloneChooseTheProxy() {
        let variables = [
            "http_proxy": "http://p:1", "HTTP_PROXY": "http://cgi:2", "HTTPS_PROXY": "http://s:3",
            "ALL_PROXY": "socks5://a:4"
        ]
        #expect(CurlTransfer.proxy(for: "http", in: variables) == "http://p:1")
        #expect(CurlTransfer.proxy(for: "https", in: variables) == "http://s:3")
        #expect(
            CurlTransfer.proxy(for: "http", in: ["HTTP_PROXY": "http://cgi:2"]) == "",
            "HTTP_PROXY is a request header under CGI")
        #expect(CurlTransfer.proxy(for: "https", in: ["ALL_PROXY": "socks5://a:4"]) == "socks5://a:4")
        #expect(CurlTransfer.proxy(for: "https", in: [:]) == "", "none: the daemon's own variables never count")
    }

    @Test func aResponseHeadKeepsWhatAResumeNeeds() {
        var head = ResponseHead(status: 206)
        for line in [
            "Content-Type: Audio/MPEG; charset=x\r\n", "content-length: 100\r\n",
            "Content-Range: bytes 400-499/500\r\n",
            "ETag: \"abc\"\r\n", "Last-Modified: Wed, 21 Oct 2015 07:28:00 GMT\r\n", "X-Other: 1\r\n", "garbage\r\n"
        ] {
            head.take(headerLine: line)
        }
        #expect(
            head.contentType == "audio/mpeg" && head.contentLength == 100 && head.rangeStart == 400
                && head.rangeTotal == 500)
        #expect(head.etag == "\"abc\"" && head.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(head.continues(from: 400) && !head.continues(from: 0) && head.totalLength == 500)
        var whole = ResponseHead(status: 200)
        whole.take(headerLine: "Content-Length: 500\r\n")
        #expect(!whole.continues(from: 400) && whole.totalLength == 500)
        var unknown = ResponseHead(status: 206)
        unknown.take(headerLine: "Content-Range: bytes 10-19/*\r\n")
        #expect(unknown.rangeStart == 10 && unknown.rangeTotal == nil)
    }

    @Test func revalidationAndResumeHeadersGoOnlyWhereTheyMean() {
        var request = DownloadRequest(url: "http://h/x", connectTimeout: 1, stallTimeout: 1, limit: 10)
        request.ifRange = "\"e\""
        #expect(request.headerLines.isEmpty, "If-Range without a Range means nothing")
        request.resumeFrom = 5
        request.ifNoneMatch = "\"e\"\r\nX-Injected: 1"
        #expect(request.headerLines == ["If-Range: \"e\""], "a validator with a line break is never sent")
    }
}
