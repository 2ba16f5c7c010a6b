import Foundation
import Logging

/// The engine's diagnostics, through swift-log.
///
/// The engine never prints to standard output: that belongs to the front
/// ends (and, in `--rpc` and `--mcp` modes, to the protocol). Where log
/// lines go, and from which level, is decided once by the executable
/// (`SQLiveLog.bootstrap`); a library user's own `LoggingSystem` applies
/// otherwise.
enum Log {
    static let engine = Logger(label: "engine")
    static let monitor = Logger(label: "monitor")
    static let scheduler = Logger(label: "scheduler")
}

/// The executables' logging: every line on standard error as
/// `sqlive[LABEL]: message`, warnings and above; `SQLIVE_QUIET` silences
/// them, `SQLIVE_DEBUG` adds the debug lines. Read once, at bootstrap.
public enum SQLiveLog {
    /// Installs the handler, once per process (the executable's first step).
    public static func bootstrap(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let level: Logger.Level =
            environment["SQLIVE_DEBUG"] != nil ? .debug : environment["SQLIVE_QUIET"] != nil ? .critical : .warning
        LoggingSystem.bootstrap { label in StandardErrorHandler(label: label, logLevel: level) }
    }

    /// One line per message on standard error, whole (one `write`).
    struct StandardErrorHandler: LogHandler {
        let label: String
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        init(label: String, logLevel: Logger.Level) {
            self.label = label
            self.logLevel = logLevel
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let line = "sqlive[\(label)]: \(event.message)\n"
            line.utf8CString.withUnsafeBufferPointer { bytes in
                _ = Foundation.write(2, bytes.baseAddress, bytes.count - 1)
            }
        }
    }
}
