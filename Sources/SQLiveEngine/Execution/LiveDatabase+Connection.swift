import GRDB
import GRDBSQLite

extension LiveDatabase {
    /// One database of the session's connection, as `.databases` lists it.
    public struct AttachedDatabase: Hashable, Sendable {
        public var name: String
        /// The file (empty for an in-memory or temporary database).
        public var file: String
        public var readonly: Bool
        /// `""`, `" read-txn"` or `" write-txn"`: the open transaction.
        public var transaction: String
    }

    /// The databases of the session's connection (`PRAGMA database_list`).
    ///
    /// This blocks the calling thread, as `run` does.
    public func attachedDatabases() throws(SQLiveError) -> [AttachedDatabase] {
        do {
            return try writer.writeWithoutTransaction { db in
                guard let connection = db.sqliteConnection else { throw SQLiveError.closed }
                return try Row.fetchAll(db, sql: "PRAGMA database_list").compactMap { row -> AttachedDatabase? in
                    guard let name = row[1] as String?, let file = row[2] as String? else { return nil }
                    let state = sqlite3_txn_state(connection, name)
                    return AttachedDatabase(
                        name: name, file: file, readonly: sqlite3_db_readonly(connection, name) == 1,
                        transaction: state == SQLITE_TXN_NONE
                            ? "" : state == SQLITE_TXN_READ ? " read-txn" : " write-txn"
                    )
                }
            }
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    /// Reads, or sets first when `value` is not negative, one of SQLite's
    /// run-time limits of the session's connection (`sqlite3_limit`, an
    /// `SQLITE_LIMIT_…` code); returns the limit now.
    ///
    /// This blocks the calling thread, as `run` does.
    public func limit(_ code: Int32, setTo value: Int32 = -1) -> Int32 {
        writer.writeWithoutTransaction { db in
            if value >= 0 { _ = sqlite3_limit(db.sqliteConnection, code, value) }
            return sqlite3_limit(db.sqliteConnection, code, -1)
        }
    }

    /// Sets how long the session's connection waits for another's lock
    /// (`.timeout MS`; 0 fails at once), as `sqlite3_busy_timeout`.
    ///
    /// This blocks the calling thread, as `run` does.
    public func setBusyTimeout(milliseconds: Int) {
        writer.writeWithoutTransaction { db in
            _ = sqlite3_busy_timeout(db.sqliteConnection, Int32(clamping: milliseconds))
        }
    }
}
