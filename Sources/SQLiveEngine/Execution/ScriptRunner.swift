import Foundation
import GRDB
import GRDBSQLite

/// Runs a script of SQL statements on one connection, in order.
///
/// Each statement is prepared when the one before it has run, so a script
/// may create a table and then use it. When a statement fails, the runner
/// reports which one, and where in the script SQLite located the error.
struct ScriptRunner {
    var script: String
    var parameters: QueryParameters
    /// The most rows read per statement; `nil` reads them all.
    var maxRows: Int?
    var tracer: StatementTracer?
    var origin: TraceEvent.Origin = .user

    /// Runs the script, streaming results to the consumer.
    ///
    /// - throws: `ScriptRunner.Failure` with the number of statements that
    ///   completed, or the consumer's own error.
    func run(in db: Database, consumer: inout some ResultConsumer) throws {
        // SQLite would read the text only up to a NUL byte, and run half of it.
        if let nul = script.utf8.firstIndex(of: 0) {
            let offset = script.utf8.distance(from: script.utf8.startIndex, to: nul)
            throw SQLiteFailure(
                code: 1, extendedCode: 1, message: "the SQL holds a NUL byte at offset \(offset)", offset: offset,
                statementIndex: 0)
        }
        let arguments: StatementArguments? = parameters.isEmpty ? nil : parameters.statementArguments
        let statements =
            if let arguments {
                try db.allStatements(sql: script, arguments: arguments)
            } else {
                try db.allStatements(sql: script)
            }
        // Asked once per script: the tracer takes a lock.
        let tracer = tracer?.isEnabled == true ? tracer : nil
        var consumedBytes = 0
        var index = 0
        let clock = ContinuousClock()
        while true {
            let start = clock.now
            let statement: Statement
            do {
                guard let next = try statements.next() else { break }
                statement = next
            } catch let error as DatabaseError {
                let offset = errorOffset(in: db, from: consumedBytes)
                throw SQLiteFailure(error, offset: offset.map { consumedBytes + $0 }, statementIndex: index)
            }
            let sqliteStatement = statement.sqliteStatement
            let statementStart = consumedBytes
            if let text = sqlite3_sql(sqliteStatement) {
                consumedBytes += strlen(text)
            }
            let columnCount = Int(sqlite3_column_count(sqliteStatement))
            let header = StatementHeader(
                index: index, script: script, range: statementStart..<consumedBytes,
                columns: columnCount == 0 ? [] : statement.columnNames)
            try consumer.statementDidStart(header)

            let totalChangesBefore = db.totalChangesCount
            var rowCount = 0
            var truncated = false
            do {
                let rows = try Row.fetchCursor(statement)
                while try rows.next() != nil {
                    if let maxRows, rowCount >= maxRows {
                        truncated = true
                        break
                    }
                    // The cursor's row is a view on the stepped statement:
                    // read the columns straight from it.
                    try consumer.consume(row: StatementRow(sqliteStatement, columnCount: columnCount))
                    rowCount += 1
                }
            } catch let error as DatabaseError {
                throw SQLiteFailure(error, statementIndex: index)
            }
            let changes = db.totalChangesCount > totalChangesBefore ? db.changesCount : 0
            let elapsed = clock.now - start
            tracer?.record(sql: header.sql, elapsed: elapsed, rows: rowCount, origin: origin)
            try consumer.statementDidFinish(
                StatementSummary(
                    index: index, rowCount: rowCount, truncated: truncated, changes: changes, elapsed: elapsed))
            index += 1
        }
    }
}

extension ScriptRunner {
    /// Where SQLite locates the error in the statement that starts at
    /// `start` (a byte offset in the script), relative to that start.
    ///
    /// GRDB does not expose `sqlite3_error_offset`, and may call SQLite
    /// again after a failed prepare; so the statement is prepared once more,
    /// raw, just to ask. This only happens on an error.
    private func errorOffset(in db: Database, from start: Int) -> Int? {
        let utf8 = Array(script.utf8) + [0]
        guard start < utf8.count - 1 else { return nil }
        return utf8.withUnsafeBufferPointer { buffer -> Int? in
            let base = UnsafeRawPointer(buffer.baseAddress! + start).assumingMemoryBound(to: CChar.self)
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v2(db.sqliteConnection, base, -1, &statement, nil)
            defer { sqlite3_finalize(statement) }
            guard code != SQLITE_OK else { return nil }
            let offset = Int(sqlite3_error_offset(db.sqliteConnection))
            return offset >= 0 ? offset : nil
        }
    }
}
