import Foundation
import GRDBSQLite

extension ScriptRunner {
    /// What a statement run on a remote leader did.
    struct RemoteRun {
        var header: StatementHeader
        var rowCount = 0
        var truncated = false
        var changes = 0
        var mayHaveWritten = false
    }

    /// Runs a statement prepared on the mirror on the dqlite leader
    /// instead: a statement with result columns as a query (its rows
    /// streamed to the consumer as they arrive), any other as an
    /// execution. The header goes to the consumer with the leader's column
    /// names.
    func runRemotely(
        _ statement: OpaquePointer, on remote: DqliteRemote, values: [SQLValue], header: StatementHeader,
        consumer: inout some ResultConsumer
    ) throws -> RemoteRun {
        let sql = sqlite3_sql(statement).map { String(cString: $0) } ?? header.sql
        let columnCount = Int(sqlite3_column_count(statement))
        let readonly = sqlite3_stmt_readonly(statement) != 0
        let source = SQLSource(sql)
        let verb = source.statements.first.flatMap(source.firstWord(of:)) ?? ""
        let dml = ["INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"].contains(verb)
        var run = RemoteRun(header: header)
        run.mayHaveWritten = !readonly
        func failure(_ error: any Error) -> SQLiteFailure {
            var failure: SQLiteFailure =
                switch error {
                case let refused as DqliteWire.Failure: refused.sqliteFailure
                case let error as SQLiveError:
                    error.sqliteFailure ?? SQLiteFailure(code: 10, extendedCode: 10, message: error.description)
                case let failure as SQLiteFailure: failure
                default: SQLiteFailure(code: 1, extendedCode: 1, message: "\(error)")
                }
            failure.statementIndex = header.index
            failure.sql = header.sql
            failure.phase = .step
            failure.statementOffset = header.range.lowerBound
            return failure
        }
        if remoteIsReadonly && !readonly {
            throw failure(SQLiteFailure(code: 8, extendedCode: 8, message: "attempt to write a readonly database"))
        }
        if columnCount > 0 && !readonly && dml {
            // libdqlite 1.11 runs `… RETURNING` but loses the write, and the
            // next write aborts the leader (docs/research/dqlite-wire.md, §13).
            throw failure(
                SQLiteFailure(
                    code: 1, extendedCode: 1,
                    message: "dqlite: RETURNING is not sent to the cluster (libdqlite 1.11 loses the write and "
                        + "its next write stops the leader); run the statement without it"))
        }
        guard columnCount > 0 else {
            try consumer.statementDidStart(run.header)
            do {
                let outcome = try remote.run(sql, values, returnsRows: false, mayRetry: readonly) { _, _ in }
                run.changes = dml ? outcome.changes : 0
            } catch {
                throw failure(error)
            }
            return run
        }
        let rows = try RemoteRows()
        var started = false
        var consumerError: (any Error)?
        do {
            _ = try remote.run(sql, values, returnsRows: true, mayRetry: readonly) { columns, batch in
                if !started {
                    started = true
                    run.header.columns = columns
                    try consumer.statementDidStart(run.header)
                }
                for row in batch where !run.truncated {
                    if let maxRows, run.rowCount >= maxRows {
                        run.truncated = true
                        break
                    }
                    do {
                        try consumer.consume(row: try rows.row(row))
                    } catch {
                        consumerError = error
                        throw error
                    }
                    run.rowCount += 1
                }
            }
        } catch {
            if let consumerError { throw consumerError }
            throw failure(error)
        }
        if !started {
            run.header.columns = (0..<columnCount).map {
                sqlite3_column_name(statement, Int32($0)).map { String(cString: $0) } ?? ""
            }
            try consumer.statementDidStart(run.header)
        }
        try rows.didStep(&consumer)
        return run
    }
}

/// Remote rows as SQLite rows: each is bound to a scratch statement
/// (`SELECT ?1, ?2, …` on a private in-memory connection) and stepped, so
/// a consumer reads it as it reads any row (`StatementRow`), with SQLite's
/// own conversions.
final class RemoteRows {
    private let connection: RawConnection
    private var statement: RawStatement?
    private var width = 0

    init() throws(SQLiveError) {
        do {
            connection = try RawConnection.inMemory()
        } catch {
            throw .remote("cannot open a scratch connection: \(error.message)")
        }
    }

    func row(_ values: [SQLValue]) throws(SQLiveError) -> StatementRow {
        if statement == nil || width != values.count {
            let list = (1...max(1, values.count)).map { "?\($0)" }.joined(separator: ", ")
            do {
                statement = try connection.prepare("SELECT \(list)")
            } catch {
                throw .remote("a row of \(values.count) columns cannot be read: \(error.message)")
            }
            width = values.count
        }
        let handle = statement!.handle
        sqlite3_reset(handle)
        for (index, value) in values.enumerated() { value.bind(to: handle, at: Int32(index + 1)) }
        guard sqlite3_step(handle) == SQLITE_ROW else { throw .remote("a row cannot be read: \(connection.lastError)") }
        return StatementRow(handle, columnCount: values.count)
    }

    /// Tells the consumer the statement stepped for the last time (the
    /// scratch statement stands for it).
    func didStep(_ consumer: inout some ResultConsumer) throws {
        guard let statement else { return }
        try consumer.statementDidStep(RanStatement(statement: statement.handle, connection: connection.handle))
    }
}
