import Foundation
import GRDBSQLite

/// SQLite evaluating a kept query's expressions over a few rows: an
/// in-memory database with an empty copy of the table (its own `CREATE
/// TABLE`, so affinities, defaults and constraints are the table's), into
/// which the rows a commit changed are inserted with their rowids, and over
/// which one of the plan's statements runs. No Swift code evaluates SQL.
///
/// Not thread-safe: confined to its owner (the scheduler's actor).
final class RowEvaluator {
    private let raw: RawConnection
    private let table: String
    private var insert: RawStatement?
    private var insertColumns: [String] = []
    private let clear: RawStatement
    private let query: RawStatement

    struct Failure: Error {
        var message: String
    }

    init(ddl: String, table: String, query sql: String) throws(Failure) {
        do {
            raw = try RawConnection.inMemory()
        } catch {
            throw Failure(message: error.message)
        }
        self.table = table
        guard raw.execute(ddl) else { throw Failure(message: "the table's copy: \(raw.lastError)") }
        do {
            clear = try raw.prepare("DELETE FROM \(SQLToken.doubleQuoted(table))")
            query = try raw.prepare(sql)
        } catch {
            throw Failure(message: error.message)
        }
    }

    /// The statement's rows over these rows of the table (rowid, columns'
    /// values by name); the table is empty again afterwards.
    func evaluate(_ rows: [(rowid: Int64, values: [SQLValue])], columns: [String]) throws(Failure) -> [[SQLValue]] {
        guard !rows.isEmpty else { return [] }
        defer {
            _ = clear.step()
            clear.reset()
        }
        if insert == nil || insertColumns != columns {
            let names = (["rowid"] + columns.map(SQLToken.doubleQuoted)).joined(separator: ", ")
            let slots = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
            do {
                insert = try raw.prepare(
                    "INSERT INTO \(SQLToken.doubleQuoted(table))(\(names)) VALUES (\(slots))")
            } catch {
                throw Failure(message: error.message)
            }
            insertColumns = columns
        }
        let insert = insert!
        for row in rows {
            sqlite3_bind_int64(insert.handle, 1, row.rowid)
            for (index, value) in row.values.enumerated() { value.bind(to: insert.handle, at: Int32(index + 2)) }
            let code = insert.step()
            insert.reset()
            guard code == SQLITE_DONE else { throw Failure(message: raw.lastError) }
        }
        return try Self.rows(of: query, on: raw)
    }

    /// Every row of a statement (reset afterwards).
    static func rows(of statement: RawStatement, on raw: RawConnection) throws(Failure) -> [[SQLValue]] {
        let count = Int(sqlite3_column_count(statement.handle))
        var rows: [[SQLValue]] = []
        try step(statement, on: raw) { rows.append(SQLValue.row(of: $0, columnCount: count)) }
        return rows
    }

    /// Steps a statement to its end, handing each row to `row` (the
    /// statement's handle, on its row); reset afterwards.
    static func step(_ statement: RawStatement, on raw: RawConnection, _ row: (OpaquePointer) -> Void) throws(Failure) {
        defer { statement.reset() }
        while true {
            let code = statement.step()
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw Failure(message: raw.lastError) }
            row(statement.handle)
        }
    }
}
