import GRDB
import GRDBSQLite

extension LiveDatabase {
    /// Inserts many rows into a table: one prepared `INSERT INTO table
    /// VALUES(?, …)` stepped once per row, in one transaction, on the
    /// session's connection — what the sqlite3 shell's `.import` does, at
    /// its pace.
    ///
    /// The source makes the rows (see `RowSource`). When the table does not
    /// exist, the source's `CREATE TABLE` makes it, in the same transaction.
    /// A row SQLite refuses (a constraint, a type) is reported to the
    /// source and the others go on; any other failure, or an error the
    /// source throws, rolls every row back. Inside a transaction the session
    /// began, the rows join it (a savepoint undoes them on failure), and
    /// its `COMMIT` publishes them.
    ///
    /// Live queries see one commit: those that read the table refresh once,
    /// whatever the number of rows. This blocks the calling thread until
    /// the last row: use it from a thread of your own, as `run`.
    ///
    /// ```swift
    /// var source = Numbers()
    /// let insertion = try database.insertRows(into: "numbers", from: &source)
    /// // insertion.inserted == 1000
    /// ```
    ///
    /// - parameter schema: The schema holding the table (`main` when `nil`).
    /// - throws: `SQLiteFailure`, or what the source throws.
    public func insertRows(
        into table: String, schema: String? = nil, from source: inout some RowSource
    ) throws -> RowInsertion {
        let live = live
        let tracer = tracer
        do {
            return try writer.writeWithoutTransaction { db in
                tracer.matchSessionTrace(on: db)
                return try Self.insertRows(into: table, schema: schema, from: &source, in: db, live: live)
            }
        } catch let error as DatabaseError {
            throw SQLiteFailure(error)
        }
    }

    private static func insertRows(
        into table: String, schema: String?, from source: inout some RowSource, in db: Database,
        live: LiveQueryCenter
    ) throws -> RowInsertion {
        guard let connection = db.sqliteConnection else { throw SQLiveError.closed }
        WALClosing.sessionMayWrite(connection)
        // Whether the change recorder observes: then the inserts, which
        // GRDB does not see, are reported to it before the commit.
        let observed = try live.scriptWillRun(db)
        let name = (schema.map { SQLToken.doubleQuoted($0) + "." } ?? "") + SQLToken.doubleQuoted(table)
        let ownsTransaction = sqlite3_get_autocommit(connection) != 0
        let savepoint = "sqlive_insert_rows"
        /// Ends the insertion's transaction or savepoint.
        func end(commit: Bool) throws {
            guard ownsTransaction else {
                try db.execute(
                    sql: commit ? "RELEASE \(savepoint)" : "ROLLBACK TO \(savepoint); RELEASE \(savepoint)")
                return
            }
            try db.execute(sql: commit ? "COMMIT" : "ROLLBACK")
        }

        // The ledger counts the whole transaction as a commit in progress:
        // the file changes while pages spill, then at the commit, and the
        // probe must not take either for another writer's.
        if ownsTransaction { live.ledger.commitWillStart() }
        defer { if ownsTransaction { live.ledger.commitDidSettle() } }
        try db.execute(sql: ownsTransaction ? "BEGIN" : "SAVEPOINT \(savepoint)")
        var wrote = false
        defer { if wrote && !observed { live.unobservedScriptDidWrite() } }
        do {
            var insertion = RowInsertion(inserted: 0, failed: 0, createdTable: false)
            var columnCount = columnCount(of: name, connection: connection)
            if case .failure(let failure) = columnCount, failure.message.hasPrefix("no such table") {
                guard let create = try source.createTableStatement(quotedName: name) else { throw failure }
                wrote = true
                try db.execute(sql: create)
                insertion.createdTable = true
                columnCount = Self.columnCount(of: name, connection: connection)
            }
            let count = try columnCount.get()
            if count > 0 {
                let sql =
                    "INSERT INTO \(name) VALUES(" + Array(repeating: "?", count: count).joined(separator: ",") + ")"
                let insert: RawStatement
                do {
                    insert = try RawStatement(on: connection, sql)
                } catch {
                    throw failure(connection, code: error.code, sql: sql)
                }
                let statement = insert.handle
                var row = RowBinding(statement: statement, columnCount: count)
                while true {
                    sqlite3_reset(statement)
                    sqlite3_clear_bindings(statement)
                    guard try source.next(into: &row) else { break }
                    wrote = true
                    let code = sqlite3_step(statement)
                    if code == SQLITE_DONE {
                        insertion.inserted += 1
                        continue
                    }
                    let failure = failure(connection, code: code, sql: sql)
                    guard Self.refusesRowOnly(code) else { throw failure }
                    insertion.failed += 1
                    source.rowDidFail(failure)
                }
                withExtendedLifetime(insert) {}
            }
            if observed && insertion.inserted > 0 {
                live.rowsWereInsertedDirectly(
                    into: table, mayChangeOtherTables: try mayChangeOtherTables(table, db))
            }
            try end(commit: true)
            return insertion
        } catch {
            do {
                try end(commit: false)
            } catch {
                Log.engine.warning("rolling back an insertion into \(name): \(error)")
            }
            throw error
        }
    }

    /// The number of columns `INSERT INTO name VALUES(...)` takes, as the
    /// sqlite3 shell counts them: those of `SELECT *`.
    private static func columnCount(of name: String, connection: OpaquePointer) -> Result<Int, SQLiteFailure> {
        do {
            return .success(try RawStatement(on: connection, "SELECT * FROM \(name)").columnCount)
        } catch {
            return .failure(failure(connection, code: error.code, sql: nil))
        }
    }

    /// Whether a failed `INSERT` leaves the others worth trying: SQLite
    /// refused this row (a constraint, a type, a size), as opposed to the
    /// database (read-only, full, busy, damaged) or an interrupt.
    private static func refusesRowOnly(_ code: Int32) -> Bool {
        switch code & 0xFF {
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG: true
        default: false
        }
    }

    /// Whether inserting into the table may change other tables: it has
    /// triggers, or foreign keys with actions point at it (a `REPLACE`
    /// deletes rows).
    private static func mayChangeOtherTables(_ table: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (
                    SELECT 1 FROM main.sqlite_schema WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
                    UNION ALL
                    SELECT 1 FROM temp.sqlite_schema WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
                    UNION ALL
                    SELECT 1 FROM main.sqlite_schema AS s, pragma_foreign_key_list(s.name) AS f
                    WHERE s.type = 'table' AND f."table" = ?1 COLLATE NOCASE
                )
                """, arguments: [table]) ?? true
    }

    private static func failure(_ connection: OpaquePointer, code: Int32, sql: String?) -> SQLiteFailure {
        let primary = code & 0xFF
        let message =
            primary == SQLITE_INTERRUPT
            ? "interrupted" : sqlite3_errmsg(connection).map { String(cString: $0) } ?? "SQLite error \(code)"
        return SQLiteFailure(
            code: primary, extendedCode: sqlite3_extended_errcode(connection), message: message, sql: sql)
    }
}
