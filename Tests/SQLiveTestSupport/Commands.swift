import Foundation

/// Runs a command to completion and returns its standard output.
///
/// - throws: When the command fails.
@discardableResult
public func runCommand(_ executable: String, _ arguments: [String], input: String? = nil) async throws -> String {
    let outcome = try await Launcher.run(executable, arguments, input: input ?? "")
    guard outcome.status == 0 else {
        throw CommandFailure(
            command: ([executable] + arguments).joined(separator: " "), status: outcome.status,
            stderr: outcome.stderr)
    }
    return outcome.stdout
}

public struct CommandFailure: Error, CustomStringConvertible {
    public var command: String
    public var status: Int32
    public var stderr: String
    public var description: String { "\(command) exited with \(status): \(stderr)" }
}

/// Writes to a database with the sqlite3 command-line shell: a real second
/// process, as another program would, at the shell's defaults (no busy
/// timeout: sqlive's watching must never make it wait).
public func sqlite3(_ database: String, _ sql: String) async throws {
    try await runCommand("/usr/bin/env", ["sqlite3", database, sql])
}

/// The path of a program on `PATH`, as the shell would find it (no
/// process is started: suites ask before their tests run).
public func which(_ name: String) -> String? {
    let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Whether a command runs and exits with 0: a suite's check that a tool
/// is installed, for an async `.enabled` condition (it awaits: a launch
/// must never be waited for on a blocked pool thread, see `Launcher`).
public func commandSucceeds(_ executable: String, _ arguments: [String]) async -> Bool {
    (try? await Launcher.run(executable, arguments).status) == 0
}
