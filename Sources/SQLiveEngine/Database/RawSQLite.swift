import GRDBSQLite

/// What SQLite answered when a raw call failed.
package struct RawSQLiteError: Error, Hashable {
    /// The primary or extended result code.
    package var code: Int32
    package var message: String
    /// The byte of the prepared text SQLite blames, if it knows.
    package var offset: Int?

    package init(code: Int32, message: String, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    /// The connection's last error (or, with none, the code's text).
    package init(code: Int32, on connection: OpaquePointer?) {
        self.code = code
        message =
            connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
    }
}

/// A SQLite connection of the engine's own, outside GRDB: the change
/// probe's, the page map's, the SQL checker's, scratch in-memory
/// databases.
///
/// The one place where a raw connection is opened and closed: it closes
/// when released (`sqlite3_close_v2`, so a statement still alive keeps it
/// until finalized). Not thread-safe: its owner calls it from one thread
/// at a time.
///
/// ```swift
/// let connection = try RawConnection(path: path, flags: SQLITE_OPEN_READONLY)
/// let version = try connection.prepare("PRAGMA data_version")
/// if version.step() == SQLITE_ROW { print(sqlite3_column_int64(version.handle, 0)) }
/// ```
package final class RawConnection {
    package let handle: OpaquePointer

    /// Opens a database; `flags` as `sqlite3_open_v2`'s, with `vfs` by name.
    ///
    /// - throws: SQLite's message, as it explains why it cannot open.
    package init(path: String, flags: Int32, vfs: String? = nil) throws(RawSQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, vfs)
        guard code == SQLITE_OK, let handle else {
            let error = RawSQLiteError(code: code, on: handle)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        // A connection of sqlive's own never checkpoints as it closes.
        WALClosing.prepare(handle)
    }

    /// A new, empty in-memory database.
    package static func inMemory() throws(RawSQLiteError) -> RawConnection {
        try RawConnection(path: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// The message of the last call that failed.
    package var lastError: String {
        sqlite3_errmsg(handle).map { String(cString: $0) } ?? "unknown error"
    }

    /// Runs SQL that answers no rows (`sqlite3_exec`); whether it succeeded
    /// (`lastError` says why not).
    @discardableResult
    package func execute(_ sql: String) -> Bool {
        sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK
    }

    /// Prepares the first statement of the SQL.
    package func prepare(_ sql: String) throws(RawSQLiteError) -> RawStatement {
        try RawStatement(on: handle, sql)
    }
}

/// A statement prepared on a raw connection, the engine's or GRDB's
/// (`Database.sqliteConnection`), finalized when released.
package final class RawStatement {
    package let handle: OpaquePointer

    /// Prepares the first statement of `sql`; blanks and comments alone
    /// are an error (`SQLITE_MISUSE`, "no statement").
    ///
    /// The connection must outlive the statement.
    package init(on connection: OpaquePointer, _ sql: String) throws(RawSQLiteError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, 0, &statement, nil)
        // The offset is only good right after the failing call.
        let offset = Int(sqlite3_error_offset(connection))
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            guard code != SQLITE_OK else { throw RawSQLiteError(code: SQLITE_MISUSE, message: "no statement") }
            var error = RawSQLiteError(code: code, on: connection)
            error.offset = offset >= 0 ? offset : nil
            throw error
        }
        handle = statement
    }

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// Prepares the first statement of the bytes (a script walked one
    /// statement at a time): the statement, `nil` when only blanks and
    /// comments were left, and the offset of the byte after it.
    package static func first(of text: UnsafeBufferPointer<CChar>, on connection: OpaquePointer)
        -> Result<(statement: RawStatement?, end: Int), RawSQLiteError>
    {
        guard let base = text.baseAddress else { return .success((nil, 0)) }
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let code = sqlite3_prepare_v3(connection, base, Int32(text.count), 0, &statement, &tail)
        guard code == SQLITE_OK else {
            let offset = Int(sqlite3_error_offset(connection))
            sqlite3_finalize(statement)
            var error = RawSQLiteError(code: code, on: connection)
            error.offset = offset >= 0 ? offset : nil
            return .failure(error)
        }
        return .success((statement.map { RawStatement(handle: $0) }, tail.map { $0 - base } ?? text.count))
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// One step: `SQLITE_ROW`, `SQLITE_DONE` or an error code.
    package func step() -> Int32 {
        sqlite3_step(handle)
    }

    /// Back to before its first step, bindings kept.
    package func reset() {
        sqlite3_reset(handle)
    }

    package var columnCount: Int { Int(sqlite3_column_count(handle)) }
}
