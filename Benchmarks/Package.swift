// swift-tools-version: 6.1
// Micro-benchmarks (ordo-one/benchmark) of announce's hot paths, run by `make bench`
// (scripts/bench.py) and not by `swift build` or `make test`: a package of its own so that
// the main build never resolves or compiles the benchmark library and its dependencies.
//
//   cd Benchmarks && swift package --disable-sandbox benchmark
import PackageDescription

let package = Package(
    name: "announce-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "announce", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"])
    ],
    targets: [
        .executableTarget(
            name: "AnnounceBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AnnounceLayers", package: "announce")
            ],
            path: "Benchmarks/AnnounceBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
