// swift-tools-version:6.0
import PackageDescription

// Type metadata through accessor functions rather than mangled names looked up at run time: the
// lookups check generic requirements by scanning every protocol conformance in the binary, and
// ArgumentParser makes dozens of them while it parses. The client's startup costs ~1 M fewer
// instructions from this target alone; `make release` passes the flag to every target (~3 M).
let metadataAccessors: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]),
]

let package = Package(
    name: "announce",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "announce", targets: ["announce"]),
        .library(name: "AnnounceKit", targets: ["AnnounceKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CMpg123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .target(name: "CPosix"),
        .target(
            name: "AnnounceKit",
            dependencies: [
                "CALSA", "CSndFile", "CMpg123", "CFLAC", "CSpeexDSP", "CPosix",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "announce",
            dependencies: [
                "AnnounceKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: metadataAccessors
        ),
        .testTarget(name: "AnnounceKitTests", dependencies: ["AnnounceKit"]),
        // Runs the built `announce` binary against generated fixtures (make test builds it first).
        .testTarget(name: "EndToEndTests"),
    ]
)
