import Foundation

/// The server's log, on standard error: standard output is the protocol's.
///
/// `SQLIVE_QUIET` silences warnings; `SQLIVE_DEBUG` adds a line per message.
enum ServerLog {
    static func warning(_ message: @autoclosure () -> String) {
        guard ProcessInfo.processInfo.environment["SQLIVE_QUIET"] == nil else { return }
        FileHandle.standardError.write(Data("sqlive[rpc]: \(message())\n".utf8))
    }

    static func debug(_ message: @autoclosure () -> String) {
        guard ProcessInfo.processInfo.environment["SQLIVE_DEBUG"] != nil else { return }
        FileHandle.standardError.write(Data("sqlive[rpc] \(message())\n".utf8))
    }
}
