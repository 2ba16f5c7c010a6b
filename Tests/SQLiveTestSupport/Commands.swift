import Foundation

/// Runs a command to completion and returns its standard output.
///
/// - throws: When the command fails.
@discardableResult
public func runCommand(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    let inputPipe = Pipe()
    process.standardInput = inputPipe
    for pipe in [output, errors, inputPipe] { pipe.closeOnExec() }
    try process.run()
    if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try inputPipe.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw CommandFailure(
            command: ([executable] + arguments).joined(separator: " "),
            status: process.terminationStatus,
            stderr: String(decoding: errorData, as: UTF8.self))
    }
    return String(decoding: data, as: UTF8.self)
}

public struct CommandFailure: Error, CustomStringConvertible {
    public var command: String
    public var status: Int32
    public var stderr: String
    public var description: String { "\(command) exited with \(status): \(stderr)" }
}

/// Writes to a database with the sqlite3 command-line shell: a real second
/// process, as another program would.
public func sqlite3(_ database: String, _ sql: String) throws {
    try runCommand("/usr/bin/env", ["sqlite3", "-cmd", ".timeout 10000", database, sql])
}
