import Foundation
import SQLiveTestSupport
import Testing

/// A temporary directory for one test, removed when the test ends.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "sqlive-repl-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Writes a file in the directory and returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let file = file(name)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The outcome of a process.
struct ProcessOutput {
    var stdout: String
    var stderr: String
    var status: Int32
}

enum Processes {
    /// The `sqlive` executable: `$SQLIVE_BIN`, or next to the test bundle.
    static let sqlive: String = {
        if let path = ProcessInfo.processInfo.environment["SQLIVE_BIN"] { return path }
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("sqlive").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "build", "--show-bin-path"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try? process.run()
        // Rare (the binary is beside the test bundle after `swift build`),
        // and blocking: see `Launcher`.
        _ = process.waitUntilExitBlocking()
        let binPath = String(decoding: pipe.fileHandleForReading.readToEndRetrying(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return binPath + "/sqlive"
    }()

    /// The environment of test processes: no colour, a private history.
    static func environment(_ extra: [String: String] = [:], directory: TemporaryDirectory) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory.file("state")
        environment["SQLIVE_QUIET"] = "1"
        environment["COLUMNS"] = nil
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts a process whose output goes to files of the directory.
    static func start(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String],
        directory: TemporaryDirectory, name: String = UUID().uuidString, cwd: String? = nil
    ) throws -> (Launcher.Child, stdout: String, stderr: String) {
        try start(
            executable, arguments, input: stdin.map { Data($0.utf8) }, environment: environment,
            directory: directory, name: name, cwd: cwd)
    }

    /// Starts a process reading bytes on its standard input (in `cwd`, if given).
    static func start(
        _ executable: String, _ arguments: [String], input: Data?, environment: [String: String],
        directory: TemporaryDirectory, name: String = UUID().uuidString, cwd: String? = nil
    ) throws -> (Launcher.Child, stdout: String, stderr: String) {
        let out = directory.file(name + ".out")
        let err = directory.file(name + ".err")
        var inputPath: String?
        if let input {
            let file = directory.file(name + ".in")
            try input.write(to: URL(fileURLWithPath: file))
            inputPath = file
        }
        let child = try Launcher.start(
            executable, arguments, stdin: inputPath.map { .file($0) } ?? .null, stdout: .file(out), stderr: .file(err),
            environment: environment, directory: cwd)
        return (child, out, err)
    }

    /// Waits for a process, killing it after the timeout (a hang, not a timing check).
    static func wait(_ process: some RunningProcess, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                return false
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Runs `sqlive` to completion.
    static func sqlive(
        _ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:],
        directory: TemporaryDirectory, cwd: String? = nil, timeout: Duration = .seconds(60)
    ) async throws -> ProcessOutput {
        try await sqlive(
            arguments, input: stdin.map { Data($0.utf8) }, environment: extra, directory: directory, cwd: cwd,
            timeout: timeout)
    }

    /// Runs `sqlive` to completion, with bytes on its standard input (in `cwd`, if given).
    static func sqlive(
        _ arguments: [String], input: Data?, environment extra: [String: String] = [:],
        directory: TemporaryDirectory, cwd: String? = nil, timeout: Duration = .seconds(60)
    ) async throws -> ProcessOutput {
        try await runToCompletion(
            sqlive, arguments, input: input, environment: environment(extra, directory: directory),
            directory: directory, cwd: cwd, timeout: timeout)
    }

    /// Runs the sqlite3 CLI to completion with these arguments (and standard
    /// input): what it printed on each stream, and its exit status.
    static func sqlite3Shell(
        _ arguments: [String], stdin: String? = nil, directory: TemporaryDirectory, cwd: String? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> ProcessOutput {
        try await runToCompletion(
            "/usr/bin/sqlite3", arguments, input: stdin.map { Data($0.utf8) },
            environment: environment(directory: directory), directory: directory, cwd: cwd, timeout: timeout)
    }

    /// Runs a program to completion: what it printed on each stream, and its exit status.
    private static func runToCompletion(
        _ executable: String, _ arguments: [String], input: Data?, environment: [String: String],
        directory: TemporaryDirectory, cwd: String?, timeout: Duration
    ) async throws -> ProcessOutput {
        let (process, out, err) = try start(
            executable, arguments, input: input, environment: environment, directory: directory, cwd: cwd)
        let finished = await wait(process, timeout: timeout)
        let name = URL(fileURLWithPath: executable).lastPathComponent
        #expect(finished, "\(name) \(arguments) did not finish in time")
        return ProcessOutput(
            stdout: try String(contentsOfFile: out, encoding: .utf8),
            stderr: try String(contentsOfFile: err, encoding: .utf8),
            status: await process.exit())
    }

    /// Runs the sqlite3 CLI: a real second process writing the database.
    static func sqlite3(_ database: String, _ sql: String) async throws {
        _ = try await sqlite3Output(database, sql)
    }

    /// Runs the sqlite3 CLI and returns what it printed; `options` go
    /// between the file and the SQL (`-cmd .expert`).
    static func sqlite3Output(_ database: String, _ sql: String, options: [String] = []) async throws -> String {
        let outcome = try await Launcher.run("/usr/bin/sqlite3", [database] + options + [sql])
        #expect(outcome.status == 0, "sqlite3 failed: \(sql): \(outcome.stderr)")
        return outcome.stdout
    }

    /// The first child of a process, from `pgrep -P`; `nil` when it has none.
    static func childProcess(of parent: String) async throws -> pid_t? {
        let outcome = try await Launcher.run("/usr/bin/pgrep", ["-P", parent])
        return outcome.stdout.split(separator: "\n").first.flatMap { pid_t($0) }
    }

    /// A re-print header's cause and count as a quiet machine prints them
    /// for one commit of the session: under load the session's own commit
    /// may be counted as another writer's too (its connection was busy past
    /// the resolver's patience; see docs/architecture.md). For tests about
    /// what is re-printed and how often, not why.
    static func quietCauses(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.replacingOccurrences(
                of: #"^(-- \S+ v\d+) \((local|external), coalesced \d+\)$"#, with: "$1 (local, coalesced 1)",
                options: .regularExpression)
        }.joined(separator: "\n")
    }

    /// Polls until the condition holds; false after the timeout (which only catches hangs).
    static func waitUntil(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool
    {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }
}

/// A child the tests wait for: a `SpawnedProcess`, or one the `Launcher` started.
protocol RunningProcess: AnyObject {
    var isRunning: Bool { get }
    func terminate()
}

extension SpawnedProcess: RunningProcess {}
extension Launcher.Child: RunningProcess {}
