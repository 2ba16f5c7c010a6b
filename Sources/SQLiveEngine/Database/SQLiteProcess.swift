import CSQLiveSupport
import GRDBSQLite

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
    public static func configure() {
        _ = sqlive_disable_memory_statistics()
        // A crash leaves a line on standard error and a non-zero status.
        sqlive_install_crash_reporter()
    }

    /// Whether SQLite has a VFS of this name (`-vfs NAME`).
    public static func hasVFS(named name: String) -> Bool {
        sqlite3_vfs_find(name) != nil
    }
}
