import Foundation

/// The server's log, on standard error: standard output is the protocol's.
///
/// `SQLIVE_QUIET` silences warnings; `SQLIVE_DEBUG` adds a line per message.
/// Both are read once, at the first log call: a debug call costs a load
/// and a branch when debugging is off (reading the environment on each
/// call was a sixth of a request's time).
enum ServerLog {
    static let isQuiet = getenv("SQLIVE_QUIET") != nil
    static let isDebugging = getenv("SQLIVE_DEBUG") != nil

    static func warning(_ message: @autoclosure () -> String) {
        guard !isQuiet else { return }
        FileHandle.standardError.write(Data("sqlive[rpc]: \(message())\n".utf8))
    }

    static func debug(_ message: @autoclosure () -> String) {
        guard isDebugging else { return }
        FileHandle.standardError.write(Data("sqlive[rpc] \(message())\n".utf8))
    }
}
