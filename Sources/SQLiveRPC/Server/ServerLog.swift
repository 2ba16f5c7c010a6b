import Logging

/// The servers' log lines (swift-log, label `rpc`), on standard error:
/// standard output is the protocol's. The executable sets the level once
/// (`SQLiveLog.bootstrap`: `SQLIVE_QUIET`, `SQLIVE_DEBUG`); a debug line
/// costs a level check when debugging is off.
enum ServerLog {
    static let logger = Logger(label: "rpc")

    static func error(_ message: @autoclosure () -> Logger.Message) {
        logger.error(message())
    }

    static func warning(_ message: @autoclosure () -> Logger.Message) {
        logger.warning(message())
    }

    static func debug(_ message: @autoclosure () -> Logger.Message) {
        logger.debug(message())
    }
}
