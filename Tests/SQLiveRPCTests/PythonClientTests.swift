import Foundation
import SQLiveLocks
import SQLiveTestSupport
import Testing

/// The Python sample client, run against the real binary while the sqlite3
/// shell writes to the database.
@Suite("Python client", .timeLimit(.minutes(2)))
struct PythonClientTests {
    static let python: String? = {
        for candidate in ["/usr/bin/python3", "/usr/local/bin/python3"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return (try? runCommand("/usr/bin/env", ["which", "python3"]))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    @Test(.enabled(if: python != nil, "python3 is not installed"))
    func watchPrintsChangesMadeByAnotherProcess() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("games.sqlite")
        try sqlite3(database, "CREATE TABLE players(name, score); INSERT INTO players VALUES ('Ann', 12);")

        let script = SQLiveBinary.packageRoot.appendingPathComponent("Samples/clients/python/watch.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.python))
        process.arguments = [
            script, "--sqlive", SQLiveBinary.path, "--changes", "1", "--timeout", "30", database, "leaders",
            "SELECT name, score FROM players ORDER BY score DESC",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  // no __pycache__ in the work tree
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let collected = OutputCollector()
        try SpawnLock.run(process)
        collected.start(reading: output.fileHandleForReading)
        defer { if process.isRunning { process.terminate() } }

        // Write once the live query is registered (its first result printed).
        try await collected.wait(for: "leaders v1:")
        try sqlite3(database, "INSERT INTO players VALUES ('Bob', 15);")
        try await collected.wait(for: "(external change)")

        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while process.isRunning && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(process.terminationStatus == 0, "\(collected.text)")
        let text = collected.text
        #expect(text.contains("leaders v1:\n  name | score\n  Ann | 12\n"))
        #expect(text.contains("(external change):\n  name | score\n  Bob | 15\n  Ann | 12\n"))
    }
}

/// Collects a pipe's output on a thread of its own.
final class OutputCollector: Sendable {
    private let data = Locked(Data())

    /// Reads a handle until its end.
    func start(reading handle: FileHandle) {
        let thread = Thread { [self] in
            while true {
                let chunk = handle.readChunk()
                if chunk.isEmpty { return }
                self.data.withLock { $0.append(chunk) }
            }
        }
        thread.start()
    }

    var text: String {
        data.withLock { String(decoding: $0, as: UTF8.self) }
    }

    /// Waits until the output contains a text; only hangs time out.
    func wait(for expected: String) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while !text.contains(expected) {
            guard clock.now < deadline else {
                Issue.record("no \"\(expected)\" in the output:\n\(text)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
