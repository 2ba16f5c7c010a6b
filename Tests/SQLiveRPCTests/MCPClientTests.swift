import Foundation
import SQLiveTestSupport
import Testing

/// `sqlive --mcp` driven by the official MCP Python SDK (PyPI `mcp`), in
/// both eras of the protocol (2025-11-25's handshake and 2026-07-28's
/// `server/discover` and `subscriptions/listen`): every tool, the bypass list in rollback-journal and WAL modes, a subscription
/// that sees the sqlite3 shell's commit, the limits, cancellation, and
/// `--allow-writes`. The scripts are in `Tests/MCPClients/python` and say how
/// to run them by hand. `.ci/run` installs the SDK; without it, this test
/// says so and is skipped.
@Suite("MCP clients", .timeLimit(.minutes(10)))
struct MCPClientTests {
    static let scripts = SQLiveBinary.packageRoot.appendingPathComponent("Tests/MCPClients/python")

    static func hasMCP() async -> Bool {
        guard let python = EditorClientTests.python else { return false }
        return await commandSucceeds(python, ["-c", "import mcp, pytest_asyncio"])
    }

    @Test(
        .enabled("the MCP Python SDK is not installed (pip install mcp)") { await hasMCP() },
        .enabled(if: EditorClientTests.hasSQLite3Shell, "the sqlite3 shell is not installed"))
    func officialPythonSDK() async throws {
        // From a directory of its own: nothing lands in the work tree.
        let directory = try TemporaryDirectory()
        let (status, output) = try await EditorClientTests.run(
            try #require(EditorClientTests.python),
            ["-m", "pytest", "-q", "-p", "no:cacheprovider", Self.scripts.path],
            in: directory.url,
            environment: ["SQLIVE_BIN": SQLiveBinary.path, "PYTHONDONTWRITEBYTECODE": "1"])
        // Installed unpinned: which version ran is printed.
        let (_, version) = try await EditorClientTests.run(
            try #require(EditorClientTests.python),
            ["-c", "from importlib.metadata import version; print(version('mcp'))"], in: directory.url,
            environment: [:])
        print("MCP Python SDK (mcp) \(version.trimmingCharacters(in: .whitespacesAndNewlines))")
        #expect(status == 0, "the MCP SDK's tests failed:\n\(output)")
        #expect(output.contains("36 passed"), "\(output)")
        #expect(!output.contains("skipped"), "\(output)")
    }
}
