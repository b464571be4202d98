import Foundation
import Testing

/// A URL goes through the proxy the caller names, downloads and live streams alike, and never
/// through the daemon's own: the daemon here has a proxy where nothing listens, the client names
/// a real one (tinyproxy) that only its environment knows. The servers report requests that came
/// through a proxy (its Via header), and tinyproxy logs the URL it was asked for.
@Suite("The caller's proxy")
struct ProxyTests {
    @Test("play URL: downloaded through the client's proxy, not the daemon's; plays as the file")
    func download() async throws {
        let proxy = try TestProxy()
        defer { proxy.stop() }
        let server = try HTTPTestServer(directory: try Harness.fixtures().path, logging: true)
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: nil, environment: TestProxy.deadProxyEnvironment)
            let file = "wav16-stereo.wav"
            let byPath = try await runtime.playCapture([try Harness.fixture(file)], label: "proxy-path")
            let byURL = try await runtime.playCapture(
                [server.url(file)], label: "proxy-url", environment: proxy.callerEnvironment)
            #expect(byURL.outcome.status == 0, "\(byURL.outcome)")
            try expectSameCapture(byURL, as: byPath, file)
            #expect(server.requests().contains("proxied /\(file)"), "not through a proxy: \(server.requests())")
            #expect(proxy.log.contains(server.url(file)), "tinyproxy's log: \(proxy.log)")
        }
    }

    @Test("play --stream URL: connects through the client's proxy, not the daemon's")
    func stream() async throws {
        let proxy = try TestProxy()
        defer { proxy.stop() }
        let clip = try await StreamTests.sweep()
        let server = try IcyTestServer(serving: clip, options: ["--rate", StreamTests.realTime])
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: nil, environment: TestProxy.deadProxyEnvironment)
            let capture = try Harness.capturePath("proxy-stream")
            let outcome = try await runtime.announce(
                ["play", "--stream", server.url(), "--duration", "1s", "-d", Harness.fileDevice(capture)],
                environment: proxy.callerEnvironment)
            #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
            let connections = try await server.connections(atLeast: 1)
            #expect(server.proxiedConnections() == connections.map(\.number), "\(connections)")
            #expect(proxy.log.contains(server.url()), "tinyproxy's log: \(proxy.log)")
            let heard = try await StreamTests.soxSamples(capture)
            #expect(heard.count == 44100 * 2, "\(heard.count / 2) frames, not 1 s")
        }
    }

    @Test("a caller with no proxy variables connects directly, whatever the daemon's are")
    func noProxy() async throws {
        let clip = try await StreamTests.sweep()
        let server = try IcyTestServer(serving: clip, options: ["--rate", StreamTests.realTime])
        defer { server.stop() }
        try await withDaemonRuntime { runtime in
            try await runtime.startDaemon(device: nil, environment: TestProxy.deadProxyEnvironment)
            let environment: [String: String?] = [
                "http_proxy": nil, "all_proxy": nil, "ALL_PROXY": nil, "no_proxy": nil, "NO_PROXY": nil
            ]
            let outcome = try await runtime.announce(
                ["play", "--stream", server.url(), "--duration", "0.5s", "-d", "null"],
                environment: environment)
            #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
            _ = try await server.connections(atLeast: 1)
            #expect(server.proxiedConnections().isEmpty)
        }
    }
}
