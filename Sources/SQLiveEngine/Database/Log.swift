import Foundation

/// The engine's diagnostics, written to standard error.
///
/// The engine never prints to standard output: that belongs to the front
/// ends (and, in `--rpc` mode, to the protocol).
enum Log {
    struct Channel: Sendable {
        let name: String

        func warning(_ message: @autoclosure () -> String) {
            guard ProcessInfo.processInfo.environment["SQLIVE_QUIET"] == nil else { return }
            FileHandle.standardError.write(Data("sqlive[\(name)]: \(message())\n".utf8))
        }

        func debug(_ message: @autoclosure () -> String) {
            guard ProcessInfo.processInfo.environment["SQLIVE_DEBUG"] != nil else { return }
            FileHandle.standardError.write(Data("sqlive[\(name)] \(message())\n".utf8))
        }
    }

    static let engine = Channel(name: "engine")
    static let monitor = Channel(name: "monitor")
    static let scheduler = Channel(name: "scheduler")
}
