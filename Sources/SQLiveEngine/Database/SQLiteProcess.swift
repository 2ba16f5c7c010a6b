import CSQLiveSupport
import GRDBSQLite
import SQLiveLocks

/// Settings of the SQLite library for a whole process.
public enum SQLiteProcess {
    /// Sets SQLite up for a program built on sqlive: call it first, before
    /// anything opens a connection, from the program's main thread (SQLite
    /// reads these settings without a lock). Later calls change nothing.
    ///
    /// It turns off SQLite's global memory statistics
    /// (`sqlite3_memory_used`), which sqlive never reads: with them on,
    /// every allocation SQLite makes takes one global mutex, which in a
    /// process with more than one thread costs an atomic operation each
    /// way. That was a seventh of a scripted load of `INSERT`s
    /// (docs/benchmarks.md). Statements' own memory counters
    /// (`sqlite3_stmt_status`) do not depend on it.
    ///
    /// It also routes SQLite's error log (`sqlite3_log`: the messages
    /// SQLite writes about errors and warnings, and the `sqlite_log()` SQL
    /// function) to `setErrorLog`'s receiver, which the sqlite3 shell's
    /// `.log` sets; while there is none, a message costs a lock and nothing else.
    ///
    /// - parameter memoryStatistics: Keeps the global memory statistics on
    ///   (the sqlite3 shell's `-stats`, whose `.stats` shows them), at
    ///   that cost.
    public static func configure(memoryStatistics: Bool = false) {
        if !memoryStatistics { _ = sqlive_disable_memory_statistics() }
        // A crash leaves a line on standard error and a non-zero status.
        sqlive_install_crash_reporter()
        if sqlive_configure_error_log(errorLogCallback) == SQLITE_OK {
            errorLog.withLock { $0.available = true }
        }
    }

    private struct ErrorLog {
        var available = false
        var receiver: (@Sendable (_ code: Int32, _ message: String) -> Void)?
    }
    private static let errorLog = Locked(ErrorLog())

    /// Sends SQLite's error log to `receiver` (`nil`: nowhere), from any
    /// thread SQLite logs on. Returns `false` when the log cannot be had:
    /// `configure()` came after SQLite's initialization, or never.
    @discardableResult
    public static func setErrorLog(_ receiver: (@Sendable (_ code: Int32, _ message: String) -> Void)?) -> Bool {
        errorLog.withLock { log in
            guard log.available else { return false }
            log.receiver = receiver
            return true
        }
    }

    fileprivate static func log(code: Int32, message: UnsafePointer<CChar>?) {
        guard let receiver = errorLog.withLock({ $0.receiver }) else { return }
        receiver(code, message.map { String(cString: $0) } ?? "")
    }

    /// Whether SQLite has a VFS of this name (`-vfs NAME`).
    public static func hasVFS(named name: String) -> Bool {
        sqlite3_vfs_find(name) != nil
    }
}

/// SQLite's `SQLITE_CONFIG_LOG` callback.
private func errorLogCallback(_ unused: UnsafeMutableRawPointer?, _ code: Int32, _ message: UnsafePointer<CChar>?) {
    SQLiteProcess.log(code: code, message: message)
}
