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

/// `runCommand`, blocking the calling thread: for what a suite checks once,
/// before its tests run (whether a tool is installed), and for threads of
/// their own, never beside running tests on Swift concurrency's pool (see
/// `Launcher`).
@discardableResult
public func runCommandBlocking(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
    let outcome = try Launcher.runBlocking(executable, arguments, input: input ?? "")
    guard outcome.status == 0 else {
        throw CommandFailure(
            command: ([executable] + arguments).joined(separator: " "), status: outcome.status,
            stderr: outcome.stderr)
    }
    return outcome.stdout
}
