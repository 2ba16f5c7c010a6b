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
        return which("python3")
    }()

    @Test(
        "mirror.py keeps a 100,000-row result from changes only: its copy equals the file after each of another process's one-row writes, and each notification stays under a kilobyte",
        .enabled(if: python != nil, "python3 is not installed"))
    func changesOnlyMirror() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("big.sqlite")
        try await sqlite3(
            database,
            """
            CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 100000)
            INSERT INTO items SELECT i, 'item ' || i, i % 13 FROM n;
            """)
        let script = SQLiveBinary.packageRoot.appendingPathComponent("Samples/clients/python/mirror.py").path
        let python = try #require(Self.python)
        let outcome = try await Launcher.run(
            python,
            [
                script, "--sqlive", SQLiveBinary.path, "--max-rows", "200000", "--check", "12",
                database, "items", "SELECT id, name, qty FROM items ORDER BY id",
            ],
            environment: ProcessInfo.processInfo.environment.merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 })
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.stdout.contains("items v1: 100000 rows of 100000"))
        #expect(outcome.stdout.contains("the copy matched after each of 12 writes"))
        let largest = outcome.stdout.split(separator: "\n").last { $0.contains("largest notification") }
            .flatMap { $0.split(separator: " ").dropLast().last }.flatMap { Int($0) }
        let bytes = try #require(largest, "\(outcome.stdout)")
        #expect(bytes > 0 && bytes < 1024, "a one-row change sent \(bytes) bytes")
    }

    @Test(.enabled(if: python != nil, "python3 is not installed"))
    func watchPrintsChangesMadeByAnotherProcess() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("games.sqlite")
        try await sqlite3(database, "CREATE TABLE players(name, score); INSERT INTO players VALUES ('Ann', 12);")

        let script = SQLiveBinary.packageRoot.appendingPathComponent("Samples/clients/python/watch.py").path
        let process = SpawnedProcess()
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
        try process.run()
        collected.start(reading: output.fileHandleForReading)
        defer { if process.isRunning { process.terminate() } }

        // Write once the live query is registered (its first result printed).
        try await collected.wait(for: "leaders v1:")
        try await sqlite3(database, "INSERT INTO players VALUES ('Bob', 15);")
        try await collected.wait(for: "(external change)")

        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while process.isRunning && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await process.exit() == 0, "\(collected.text)")
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
