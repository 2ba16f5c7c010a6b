// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "sqlive",
    products: [
        .executable(name: "sqlive", targets: ["sqlive"]),
        .library(name: "SQLiveEngine", targets: ["SQLiveEngine"]),
        .library(name: "SQLiveProtocol", targets: ["SQLiveProtocol"]),
        .library(name: "SQLiveRPC", targets: ["SQLiveRPC"]),
        .library(name: "SQLiveREPL", targets: ["SQLiveREPL"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        // Every log line, its level set once by the executable.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // File descriptors' writes (EINTR and EAGAIN handled once).
        .package(url: "https://github.com/apple/swift-system", from: "1.8.0"),
        // HTTP and WebSocket for the network transports (`--mcp --http`,
        // `--web`): no macros, and a static release binary (docs/web.md
        // says why this one, with the figures).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // What Hummingbird's API is made of: header fields, byte buffers.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Tests only: a clock that suspends its sleepers until advanced.
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.0.0"),
        // Tests only: the one launcher of the tests' child processes.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.0"),
    ],
    targets: [
        // GNU readline, through a module map and a small shim (no pkgConfig).
        .systemLibrary(
            name: "CReadline",
            providers: [.apt(["libreadline-dev"])]),

        // A lock ThreadSanitizer can see, the wake pipe and the one write
        // loop, shared by every target.
        .target(
            name: "SQLiveLocks",
            dependencies: [.product(name: "SystemPackage", package: "swift-system")]),

        // A few lines of C the engine cannot write in Swift without cost.
        .target(
            name: "CSQLiveSupport",
            linkerSettings: [.linkedLibrary("sqlite3")]),

        // The engine: databases, SQL, schema, EXPLAIN, tracing, live queries.
        // It knows nothing of its front ends.
        .target(
            name: "SQLiveEngine",
            dependencies: [
                "CSQLiveSupport",
                "SQLiveLocks",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // The protocol's wire: JSON, message types, ids, error codes,
        // framing. No engine inside: a Swift client can use it alone.
        .target(name: "SQLiveProtocol"),

        // The JSON-RPC 2.0 server over stdio, in Language Server style:
        // dispatch, lifecycle, handlers over the engine.
        .target(
            name: "SQLiveRPC",
            dependencies: [
                "SQLiveProtocol", "SQLiveEngine", "SQLiveLocks", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),

        // The interactive REPL and scripted sessions.
        .target(
            name: "SQLiveREPL",
            dependencies: [
                "SQLiveEngine", "SQLiveLocks", "CReadline", .product(name: "SystemPackage", package: "swift-system"),
                // .dump's REAL literals: SQLite's own text-to-double, and a
                // C formatter of digits.
                "CSQLiveSupport",
                // The demo's writer is another app's connection: a GRDB one.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),

        // The thin executable that parses arguments and picks a front end.
        .executableTarget(
            name: "sqlive",
            dependencies: [
                "SQLiveRPC",
                "SQLiveREPL",
                "SQLiveEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // A release binary carries the Swift runtime and Foundation in
            // itself: it starts in about two thirds of the time, without
            // the dynamic linker resolving the runtime's symbols
            // (docs/benchmarks.md, start-up).
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims",
                        "-l_FoundationCollections",
                    ], .when(configuration: .release))
            ]),

        // Benchmarks: every figure next to its anchor, in one run.
        .executableTarget(
            name: "sqlive-bench",
            dependencies: [
                "SQLiveEngine",
                "SQLiveLocks",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // What the test targets share: temporary directories, the sqlite3
        // CLI and other writer processes, the sqlive binary.
        .target(
            name: "SQLiveTestSupport",
            dependencies: [
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/SQLiveTestSupport"),

        .testTarget(
            name: "SQLiveEngineTests",
            dependencies: [
                "SQLiveEngine",
                "SQLiveLocks",
                "SQLiveTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Clocks", package: "swift-clocks"),
            ]),
        .testTarget(
            name: "SQLiveProtocolTests",
            dependencies: ["SQLiveProtocol", "SQLiveTestSupport"]),
        .testTarget(
            name: "SQLiveRPCTests",
            dependencies: [
                "SQLiveRPC", "SQLiveProtocol", "SQLiveEngine", "SQLiveLocks", "SQLiveTestSupport",
                .product(name: "Clocks", package: "swift-clocks"),
            ]),
        .testTarget(
            name: "SQLiveREPLTests",
            dependencies: [
                "SQLiveREPL", "SQLiveEngine", "SQLiveTestSupport",
                // SQLite's own LIKE, beside the REPL's name patterns.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets, built only by scripts/fuzz.sh (libFuzzer provides
// their `main`, so a normal build could not link them).
if Context.environment["SQLIVE_FUZZ"] != nil {
    package.targets.append(
        .executableTarget(
            name: "sqlive-fuzz",
            dependencies: ["SQLiveRPC", "SQLiveProtocol", "SQLiveREPL", "SQLiveEngine"],
            path: "Fuzz/Sources/sqlive-fuzz"))
}
