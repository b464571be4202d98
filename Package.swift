// swift-tools-version:6.0
import PackageDescription

// Type metadata through accessor functions rather than mangled names looked up at run time: the
// lookups check generic requirements by scanning every protocol conformance in the binary, and
// ArgumentParser makes dozens of them while it parses. The client's startup costs ~1 M fewer
// instructions from this target alone; `make release` passes the flag to every target (~3 M).
let metadataAccessors: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])
]

let package = Package(
    name: "announce",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "announce", targets: ["announce"]),
        // For the micro-benchmarks' own package (Benchmarks/, `make bench`): the layers they
        // measure through their public API. Nothing in this package uses it.
        .library(name: "AnnounceLayers", targets: ["AnnounceModel", "AnnounceSources", "AnnounceEngine"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0")
    ],
    targets: [
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CMpg123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        // libcurl's headers (libcurl4-openssl-dev); the library itself is loaded on first use.
        // The one loader of the libraries below that are opened on first use (dlopen).
        .target(name: "CLoader"),
        .target(name: "CCurl", dependencies: ["CLoader"]),
        // libpulse's headers (libpulse-dev); the library itself is loaded by the daemon when it first
        // ducks other applications.
        .target(name: "CPulse", dependencies: ["CLoader"]),
        // libebur128's headers (libebur128-dev): EBU R128 loudness, for `info` and a loudness stage;
        // the library is loaded on first use, as libcurl is.
        .target(name: "CEBUR128", dependencies: ["CLoader"]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        // libsonic ships no pkg-config file: the module map links it by name.
        .systemLibrary(name: "CSonic", providers: [.apt(["libsonic-dev"])]),
        .target(name: "CPosix"),
        // sd-bus's headers (libsystemd-dev); libsystemd itself is loaded on first use, as libcurl is.
        .target(name: "CSDBus", dependencies: ["CLoader"]),
        // libmosquitto's headers (libmosquitto-dev); the library is loaded on first use: only a
        // daemon with [mqtt] and the zone commands (`play --zone`, `announce hosts`) pay for it.
        .target(name: "CMosquitto", dependencies: ["CLoader"]),
        // The layers, each depending only on those below it (docs/ARCHITECTURE.md); the layering
        // test (Tests/EndToEndTests/LayeringTests.swift) fails a change that breaks them.
        // Model: queue, session policy, item lifecycle, protocol messages. Pure: no C, no I/O.
        .target(
            name: "AnnounceModel",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")]
        ),
        // System: files, clocks, threads and errors over POSIX.
        .target(
            name: "AnnounceSystem",
            dependencies: ["AnnounceModel", "CPosix", .product(name: "Logging", package: "swift-log")]
        ),
        // Sources: the decoders and the registry that sniffs bytes to choose one.
        .target(
            name: "AnnounceSources",
            dependencies: ["AnnounceModel", "AnnounceSystem", "CSndFile", "CMpg123", "CFLAC", "CEBUR128"]),
        // Output: ALSA devices, their catalog, probes and holders; the sound server's other streams.
        .target(
            name: "AnnounceOutput",
            dependencies: [
                "AnnounceModel", "AnnounceSystem", "CALSA", "CPulse", "CPosix",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // Engine: the playback thread, the mixer, ramps, resampling, and tempo, pitch and silence
        // skipping (libsonic) between a Source (the model's protocol: it never sees a decoder) and Output.
        .target(
            name: "AnnounceEngine",
            dependencies: ["AnnounceModel", "AnnounceSystem", "AnnounceOutput", "CSpeexDSP", "CSonic", "CPosix"]
        ),
        // Bus: the daemon on the D-Bus session bus (MPRIS: announce as a player; pausing the others).
        .target(name: "AnnounceBus", dependencies: ["AnnounceModel", "AnnounceSystem", "CSDBus", "CPosix"]),
        // Daemon: the control loop, queue controller, connections, spool and the engine driver
        // (which opens live streams through AnnounceNetwork).
        .target(
            name: "AnnounceDaemon",
            dependencies: [
                "AnnounceModel", "AnnounceSystem", "AnnounceSources", "AnnounceOutput", "AnnounceEngine",
                "AnnounceNetwork", "AnnounceBus",
                "CPosix",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // Network: the daemon's downloads (libcurl) into the media directory, for `play URL`, and
        // live streams' connections, for `play --stream URL`.
        .target(name: "AnnounceNetwork", dependencies: ["AnnounceModel", "AnnounceSystem", "CCurl", "CPosix"]),
        // Client: talking to the daemon (and starting it) over its socket.
        .target(name: "AnnounceClient", dependencies: ["AnnounceModel", "AnnounceSystem", "CPosix"]),
        // Zones over MQTT (libmosquitto through CMosquitto): the daemon's bridge, a client of its
        // own daemon's socket, and the sending side of `play --zone` and `announce hosts`.
        .target(
            name: "AnnounceZones",
            dependencies: [
                "AnnounceModel", "AnnounceSystem", "AnnounceClient", "CMosquitto", "CPosix",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The CLI: one file per subcommand.
        .executableTarget(
            name: "announce",
            dependencies: [
                "AnnounceModel", "AnnounceSystem", "AnnounceClient", "AnnounceSources", "AnnounceOutput",
                "AnnounceNetwork", "AnnounceDaemon",
                "AnnounceZones", "CPosix",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: metadataAccessors
        ),
        .testTarget(
            name: "UnitTests",
            dependencies: [
                "AnnounceModel", "AnnounceSystem", "AnnounceSources", "AnnounceOutput", "AnnounceEngine",
                "AnnounceDaemon", "AnnounceClient", "AnnounceNetwork", "AnnounceBus", "AnnounceZones", "CPosix"
            ]
        ),
        // Runs the built `announce` binary against generated fixtures (make test builds it first).
        .testTarget(name: "EndToEndTests")
    ]
)
