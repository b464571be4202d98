import Foundation
import Testing

/// The layers of docs/ARCHITECTURE.md, checked on the package graph and on every `import` in
/// Sources: SwiftPM lets a file import any module already built, declared or not, so the graph
/// alone does not hold the line.
@Suite struct LayeringTests {
    /// Each layer and the layers it may use: dependencies point down only.
    static let allowed: [String: Set<String>] = [
        "AnnounceModel": [],
        "AnnounceSystem": ["AnnounceModel"],
        "AnnounceSources": ["AnnounceModel", "AnnounceSystem"],
        "AnnounceOutput": ["AnnounceModel", "AnnounceSystem"],
        // The engine plays any Source (the model's protocol), never a decoder.
        "AnnounceEngine": ["AnnounceModel", "AnnounceSystem", "AnnounceOutput"],
        // The session bus (MPRIS): only the daemon joins it.
        "AnnounceBus": ["AnnounceModel", "AnnounceSystem"],
        // The daemon downloads URL items and opens live streams itself (AnnounceNetwork): they are
        // read while they play, not before they are queued.
        "AnnounceDaemon": [
            "AnnounceModel", "AnnounceSystem", "AnnounceSources", "AnnounceOutput", "AnnounceEngine",
            "AnnounceNetwork", "AnnounceBus"
        ],
        "AnnounceClient": ["AnnounceModel", "AnnounceSystem"],
        // Zones over MQTT: the daemon's bridge is a client of its own daemon's socket, so that a
        // play from another host is a local play; the CLI sends zone plays through it too.
        "AnnounceZones": ["AnnounceModel", "AnnounceSystem", "AnnounceClient"],
        // The daemon's downloads and live streams; the CLI's `announce cache`.
        "AnnounceNetwork": ["AnnounceModel", "AnnounceSystem"],
        "announce": [
            "AnnounceModel", "AnnounceSystem", "AnnounceClient", "AnnounceSources", "AnnounceOutput", "AnnounceNetwork",
            "AnnounceDaemon", "AnnounceZones"
        ]
    ]
    /// What the pure model may import: the standard library's own modules and swift-collections.
    static let modelImports: Set<String> = ["FoundationEssentials", "HeapModule", "Synchronization"]
    /// The C modules of this package; any other module not in `allowed` is a system or package one.
    /// CSDBus: sd-bus (libsystemd) for AnnounceBus, which no Swift package offers. CPulse (libpulse,
    /// loaded on first use): the daemon lowers other applications' streams (issue 15). CMosquitto
    /// (libmosquitto, loaded on first use): zones over MQTT (issue 16), for AnnounceZones only.
    static let cModules: Set<String> = [
        "CALSA", "CSndFile", "CMpg123", "CFLAC", "CSpeexDSP", "CSonic", "CCurl", "CSDBus", "CPulse",
        "CMosquitto", "CPosix"
    ]
    static let systemCModules: Set<String> = ["Glibc", "Darwin", "Musl", "SwiftGlibc"]

    static func sources(of target: String) throws -> [(file: String, imports: Set<String>)] {
        let directory = Harness.repoRoot.appendingPathComponent("Sources/\(target)")
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else {
            throw HarnessError("no Sources/\(target)")
        }
        var files: [(String, Set<String>)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8)
            files.append((relative, Set(text.split(separator: "\n").compactMap(importedModule))))
        }
        // A renamed or moved target must not leave its checks running over nothing.
        guard !files.isEmpty else { throw HarnessError("no Swift files in Sources/\(target)") }
        return files
    }

    /// The module a line imports, in any form Swift takes: after attributes (`@testable`,
    /// `@preconcurrency`, `@_implementationOnly`, `@_spi(X)`), an access level (`internal import`)
    /// and a declaration kind (`import struct M.T`), the name before the first `.`.
    static func importedModule(_ line: Substring) -> String? {
        let accessLevels: Set<Substring> = ["public", "package", "internal", "fileprivate", "private", "open"]
        let kinds: Set<Substring> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]
        let code = line.replacing(#/@\w+(\([^)]*\))?/#, with: " ")
        var words = code.split(whereSeparator: \.isWhitespace).drop { accessLevels.contains($0) }
        guard words.popFirst() == "import", var name = words.popFirst() else { return nil }
        if kinds.contains(name) { name = words.popFirst() ?? "" }
        let module = name.prefix { $0 != "." && $0 != ";" }
        return module.isEmpty ? nil : String(module)
    }

    /// Not I/O by import alone: FoundationEssentials, which the model may use, still reads files,
    /// the environment and the clock. The model's time comes in as arguments.
    static func modelIO() throws -> Regex<AnyRegexOutput> {
        try Regex(
            #"\b(FileManager|FileHandle|ProcessInfo|URLSession|DispatchQueue|Thread|fopen|open|getenv|setenv|clock_gettime|gettimeofday|print)\(|\b(FileManager|FileHandle|ProcessInfo|Thread|CommandLine)\.|\b(Data|String|Array)\(contentsOf|\bDate\(\)|\bDate\.now\b"#
        )
    }

    /// Package.swift's targets and the names each lists as a dependency (read as text: a
    /// `swift package` run would wait on the lock that `swift test` holds).
    static func declaredGraph() throws -> [String: Set<String>] {
        let text = try String(contentsOf: Harness.repoRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        var graph: [String: Set<String>] = [:]
        let marked = ["target(", "executableTarget(", "testTarget(", "systemLibrary("]
            .reduce(text) { $0.replacingOccurrences(of: "." + $1, with: "\u{1}") }
        for body in marked.components(separatedBy: "\u{1}").dropFirst() {
            guard let nameRange = body.range(of: #"name: "([A-Za-z]+)""#, options: .regularExpression) else { continue }
            let name = body[nameRange].split(separator: "\"")[1]
            var dependencies = Set<String>()
            if let list = body.range(of: #"dependencies: \[[^\]]*\]"#, options: .regularExpression) {
                let quoted = body[list].split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map {
                    String($0.element)
                }
                dependencies = Set(quoted)
            }
            graph[String(name)] = dependencies
        }
        return graph
    }

    @Test func thePackageGraphPointsDown() throws {
        let graph = try Self.declaredGraph()
        for (name, allowed) in Self.allowed {
            let dependencies = try #require(graph[name], "no target \(name) in Package.swift")
            let upward = dependencies.filter { Self.allowed[$0] != nil }.subtracting(allowed)
            #expect(upward.isEmpty, "\(name) depends on \(upward.sorted()), above it or beside it")
        }
        let model = try #require(graph["AnnounceModel"])
        #expect(
            model.isDisjoint(with: Self.cModules), "the model depends on \(model.intersection(Self.cModules).sorted())")
    }

    @Test(arguments: [
        ("import AnnounceModel", "AnnounceModel"),
        ("  @testable import AnnounceDaemon", "AnnounceDaemon"),
        ("internal import Glibc", "Glibc"),
        ("public import AnnounceSystem", "AnnounceSystem"),
        ("package import AnnounceOutput", "AnnounceOutput"),
        ("@_implementationOnly import CPosix", "CPosix"),
        ("@preconcurrency import Logging", "Logging"),
        ("@_spi(Testing) public import AnnounceEngine", "AnnounceEngine"),
        ("import struct AnnounceDaemon.Daemon", "AnnounceDaemon"),
        ("import func Glibc.open", "Glibc"),
        ("import AnnounceModel.Limits", "AnnounceModel")
    ])
    func everyFormOfImportNamesItsModule(line: String, module: String) {
        #expect(Self.importedModule(Substring(line)) == module, "\(line)")
    }

    @Test func linesThatAreNoImportNameNone() {
        for line in ["// import AnnounceDaemon", "let importance = 1", "    importFile()", "import"] {
            #expect(Self.importedModule(Substring(line)) == nil, "\(line)")
        }
    }

    @Test func everyImportIsALayerBelow() throws {
        for (target, allowed) in Self.allowed {
            for (file, imports) in try Self.sources(of: target) {
                let layers = imports.filter { Self.allowed[$0] != nil }
                let upward = layers.subtracting(allowed)
                #expect(upward.isEmpty, "Sources/\(target)/\(file) imports \(upward.sorted())")
            }
        }
    }

    @Test func theModelImportsNoCModuleAndNoIO() throws {
        for (file, imports) in try Self.sources(of: "AnnounceModel") {
            let extra = imports.subtracting(Self.modelImports)
            #expect(extra.isEmpty, "Sources/AnnounceModel/\(file) imports \(extra.sorted())")
        }
        let io = try Self.modelIO()
        let model = Harness.repoRoot.appendingPathComponent("Sources/AnnounceModel")
        for case let relative as String in FileManager.default.enumerator(atPath: model.path)!
        where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: model.appendingPathComponent(relative), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line  // comments may name them
                #expect(
                    !code.contains(io),
                    "Sources/AnnounceModel/\(relative):\(number + 1) does I/O: \(line.trimmingCharacters(in: .whitespaces))"
                )
            }
        }
    }

    @Test func theIODenylistCatchesWhatItNames() throws {
        let io = try Self.modelIO()
        for code in [
            "let data = Data(contentsOf: url)", "FileManager.default.fileExists(atPath: p)", "let now = Date()",
            "ProcessInfo.processInfo.environment", "getenv(\"HOME\")", "fopen(path, \"r\")", "Date.now"
        ] {
            #expect(code.contains(io), "\(code)")
        }
        for code in ["buffer.append(contentsOf: more)", "let isOpen = true", "func reopen()", "updated = date"] {
            #expect(!code.contains(io), "\(code)")
        }
    }

    /// The CLI starts the daemon and nothing more: one file imports it, and the daemon's public
    /// surface is its entry point (the rest is internal, reached by tests through @testable).
    @Test func theCLIUsesOnlyTheDaemonsEntryPoint() throws {
        let importers = try Self.sources(of: "announce").filter { $0.imports.contains("AnnounceDaemon") }.map(\.file)
        #expect(importers == ["DaemonCommand.swift"], "\(importers)")
        let entryPoint: Set<String> = ["Daemon", "Configuration", "init", "run"]
        let directory = Harness.repoRoot.appendingPathComponent("Sources/AnnounceDaemon")
        for case let relative as String in FileManager.default.enumerator(atPath: directory.path)!
        where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8)
            var insideConfiguration = false
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.contains("struct Configuration") { insideConfiguration = true }
                if insideConfiguration && line.hasPrefix("    }") { insideConfiguration = false }
                // A declaration's words, attributes left out: its access comes first.
                let words = line.split(separator: " ").drop { $0.hasPrefix("@") }
                guard let access = words.first, ["public", "package", "open"].contains(access) else { continue }
                if insideConfiguration && words.contains("var") { continue }
                let name =
                    words.dropFirst()
                    .first {
                        !["final", "class", "struct", "enum", "func", "var", "let", "convenience", "static"].contains(
                            $0)
                    }
                    .map { String($0.prefix { $0.isLetter || $0.isNumber }) } ?? ""
                #expect(
                    entryPoint.contains(name),
                    "Sources/AnnounceDaemon/\(relative): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }

    /// No file imports the whole of Foundation: FoundationEssentials is enough, and Foundation
    /// links ICU's data statically (the stripped binary went from 17.6 MB to 61.2 MB).
    @Test func noSourceFileImportsAllOfFoundation() throws {
        let sources = Harness.repoRoot.appendingPathComponent("Sources")
        let whole = try Regex(#"^\s*(@_exported\s+)?import\s+(Foundation|FoundationInternationalization)\s*$"#)
        for case let relative as String in FileManager.default.enumerator(atPath: sources.path)!
        where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(relative), encoding: .utf8)
            for (number, line) in text.split(separator: "\n").enumerated() where line.firstMatch(of: whole) != nil {
                Issue.record(
                    "Sources/\(relative):\(number + 1): \(line): import FoundationEssentials, or Glibc for the maths")
            }
        }
    }

    /// Small parts with one job each: no Swift file in Sources over 400 lines, and no implicitly
    /// unwrapped optional (`var spool: Spool!`): what a type needs is there from its init.
    @Test func noSourceFileIsOver400LinesOrDeclaresAnImplicitlyUnwrappedOptional() throws {
        let sources = Harness.repoRoot.appendingPathComponent("Sources")
        let unwrapped = try Regex(#":\s*\[?[A-Z][A-Za-z0-9_.]*(<[^>]*>)?\]?!(?!=)"#)
        var checked = 0
        for case let relative as String in FileManager.default.enumerator(atPath: sources.path)!
        where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(relative), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let count = lines.count - (text.hasSuffix("\n") ? 1 : 0)
            #expect(count <= 400, "Sources/\(relative) has \(count) lines")
            for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect(
                    line.firstMatch(of: unwrapped) == nil,
                    "Sources/\(relative):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
            checked += 1
        }
        #expect(checked > 50, "only \(checked) files found under Sources")
    }
}
