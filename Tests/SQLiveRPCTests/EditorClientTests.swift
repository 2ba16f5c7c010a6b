import Foundation
import SQLiveTestSupport
import Testing

/// The language server driven by clients that are not ours: pytest-lsp
/// posing as Neovim, Emacs and VS Code (every reply checked against the
/// LSP specification), and a real headless Neovim with no plugin.
///
/// Both run the real binary; their scripts live in `Tests/LSPClients/`.
/// `.ci/run` installs pytest-lsp and Neovim; without them, the tests say
/// so and are skipped.
@Suite("Editor clients", .timeLimit(.minutes(5)))
struct EditorClientTests {
    static let clients = SQLiveBinary.packageRoot.appendingPathComponent("Tests/LSPClients")

    static func which(_ command: String) -> String? {
        let path = (try? runCommand("/usr/bin/env", ["which", command]))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return path?.isEmpty == false ? path : nil
    }

    static let python: String? = which("python3")
    static let hasPytestLSP: Bool = {
        guard let python else { return false }
        return (try? runCommand(python, ["-c", "import pytest_lsp"])) != nil
    }()
    static let neovim: String? = which("nvim")

    /// Runs a command with a time limit only hangs reach, and returns its
    /// exit status and everything it wrote.
    static func run(_ executable: String, _ arguments: [String], in directory: URL, environment: [String: String])
        async throws -> (status: Int32, output: String)
    {
        let process = Process()
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
        let deadline = clock.now + .seconds(240)
        while process.isRunning && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            process.terminate()
            Issue.record("\(executable) did not finish:\n\(collected.text)")
        }
        process.waitUntilExit()
        // Let the reading thread take the last bytes.
        try await Task.sleep(for: .milliseconds(50))
        return (process.terminationStatus, collected.text)
    }

    @Test(.enabled(if: hasPytestLSP, "pytest-lsp is not installed (pip install pytest-lsp)"))
    func pytestLSPPosingAsNeovimEmacsAndVSCode() async throws {
        let (status, output) = try await Self.run(
            try #require(Self.python), ["-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
            in: Self.clients.appendingPathComponent("python"),
            environment: ["SQLIVE_BIN": SQLiveBinary.path, "PYTHONDONTWRITEBYTECODE": "1"])
        #expect(status == 0, "\(output)")
        // 8 tests, each as three clients.
        #expect(output.contains("24 passed"), "\(output)")
    }

    @Test(.enabled(if: neovim != nil, "Neovim is not installed"))
    func headlessNeovimShowsAndClearsTheDiagnostic() async throws {
        let directory = try TemporaryDirectory()
        let script = Self.clients.appendingPathComponent("neovim/diagnostics.lua").path
        let (status, output) = try await Self.run(
            try #require(Self.neovim), ["--headless", "--clean", "-c", "luafile \(script)"], in: directory.url,
            environment: ["SQLIVE_BIN": SQLiveBinary.path, "SQLIVE_DIR": directory.url.path])
        #expect(status == 0, "\(output)")
        #expect(output.contains("ok: another process creating the table clears it"), "\(output)")
    }
}
