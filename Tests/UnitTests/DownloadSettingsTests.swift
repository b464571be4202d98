import Testing
import AnnounceModel
@testable import AnnounceNetwork

/// What `play` takes for a URL, and the config keys of its downloads.
@Suite struct DownloadSettingsTests {
    @Test(arguments: [
        ("https://host/x.mp3", "https"), ("HTTP://host/x", "http"), ("file:///tmp/x.wav", "file"), ("ftp://h/x", "ftp"),
        ("svn+ssh://h/x", "svn+ssh"),
    ])
    func urlsHaveTheirScheme(argument: String, scheme: String) {
        #expect(Download.scheme(of: argument) == scheme)
    }

    @Test func pathsAreNoURLs() {
        for path in ["/tmp/x.wav", "x.wav", "-", "dir/a://b", "://x", "1http://x", "", "chime"] {
            #expect(Download.scheme(of: path) == nil, "\(path)")
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
        #expect(warnings == ["c:1: connect-timeout must be a time of 1s to 10m, like 30s, not '0s'",
                             "c:2: stall-timeout must be a time of 1s to 10m, like 30s, not 'forever'"])
    }
}
