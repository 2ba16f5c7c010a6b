import Foundation
import GRDB
import GRDBSQLite

/// The Fetch step of the cycle: runs a live query's statement on a
/// connection, with the region it reads. Runs on GRDB's database threads.
enum LiveQueryFetcher {
    /// A fetch's outcome.
    struct Fetched: Sendable {
        var result: LiveQueryResult
        var region: DatabaseRegion
        /// The tables of `region`, when it differs from the one the caller
        /// knew (`nil`: unchanged).
        var tables: [String]?
        var elapsed: Duration
        var counters: StatementCounters
        /// The pages it read, when known (observer connections in
        /// rollback-journal modes).
        var dependency: ObserverVFS.PageDependency?
        /// Not read again: none of its pages changed (`result` is the last one).
        var skipped = false
    }

    /// Checks that a definition can be a live query: one read-only statement that returns rows.
    static func validate(_ definition: LiveQueryDefinition, _ db: Database) throws {
        let statement: Statement
        do {
            statement = try db.makeStatement(sql: definition.sql)
        } catch let error as DatabaseError where error.message?.contains("Multiple statements") ?? false {
            throw SQLiveError.invalidLiveQuery("a live query must be a single statement")
        }
        guard statement.isReadonly else {
            throw SQLiveError.invalidLiveQuery(
                "a live query must be a read-only statement (SELECT, WITH, VALUES or a read-only PRAGMA)")
        }
        guard !statement.columnNames.isEmpty else {
            throw SQLiveError.invalidLiveQuery("a live query must return rows")
        }
        try SQLScript.match(definition.parameters, [SQLScript.Statement(statement.sqliteStatement)])
    }

    /// Runs a live query's statement, reading at most `rowCap` rows.
    ///
    /// - parameter knownRegion: the region the caller knows; the tables are
    ///   looked up only when the statement's region differs from it.
    static func fetch(
        _ definition: LiveQueryDefinition, _ db: Database, rowCap: Int, tracer: StatementTracer,
        knownRegion: DatabaseRegion?, recordsPages: Bool
    ) throws -> Fetched {
        guard recordsPages else {
            return try fetch(definition, db, rowCap: rowCap, tracer: tracer, knownRegion: knownRegion)
        }
        var (fetched, dependency) = try ObserverVFS.recordingPages(db) {
            try fetch(definition, db, rowCap: rowCap, tracer: tracer, knownRegion: knownRegion)
        }
        fetched.dependency = dependency
        return fetched
    }

    /// `fetch` without recording its pages.
    static func fetch(
        _ definition: LiveQueryDefinition, _ db: Database, rowCap: Int, tracer: StatementTracer,
        knownRegion: DatabaseRegion?
    ) throws -> Fetched {
        let clock = ContinuousClock()
        let start = clock.now
        let statement = try db.makeStatement(sql: definition.sql)
        if !definition.parameters.isEmpty {
            try statement.setArguments(definition.parameters.statementArguments)
        }
        let region = statement.databaseRegion
        let columns = statement.columnNames
        var rows: [[SQLValue]] = []
        var truncated = false
        var total = 0
        let cursor = try Row.fetchCursor(statement)
        while try cursor.next() != nil {
            if rows.count >= rowCap {
                truncated = true
                break
            }
            rows.append(SQLValue.row(of: statement.sqliteStatement, columnCount: columns.count))
        }
        total = rows.count
        if truncated {
            // The rows past the cap are counted, not read: every truncated
            // view can say how many there really are. (The cursor is done
            // with; the statement is stepped to its end directly.)
            total += 1
            var code = sqlite3_step(statement.sqliteStatement)
            while code == SQLITE_ROW {
                total += 1
                code = sqlite3_step(statement.sqliteStatement)
            }
            guard code == SQLITE_DONE else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                    sql: definition.sql)
            }
        }
        if !statement.hasSameColumns(as: columns) {
            // Prepared on a schema the connection had cached, and prepared
            // again by SQLite when its first step found the schema changed
            // (`ALTER TABLE … ADD COLUMN` under `SELECT *`): the rows were
            // read with the old column count. Read again, on the new schema.
            return try fetch(definition, db, rowCap: rowCap, tracer: tracer, knownRegion: knownRegion)
        }
        let elapsed = clock.now - start
        let counters = StatementCounters(statement.sqliteStatement)
        tracer.record(sql: statement.sql, elapsed: elapsed, rows: rows.count, counters: counters, origin: .liveQuery)
        let tables = region == knownRegion ? nil : try self.tables(in: region, db)
        return Fetched(
            result: LiveQueryResult(columns: columns, rows: rows, truncated: truncated, total: total), region: region,
            tables: tables, elapsed: elapsed, counters: counters)
    }

    /// The tables a region reads, sorted; `*` for the full database.
    ///
    /// Asked of the region itself (`isModified(byEventsOfKind:)`) for each
    /// table of every schema the connection sees — main, temp, attached.
    static func tables(in region: DatabaseRegion, _ db: Database) throws -> [String] {
        if region.isFullDatabase { return ["*"] }
        let names = try String.fetchAll(
            db, sql: "SELECT DISTINCT name FROM pragma_table_list WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        return names.filter { region.isModified(byEventsOfKind: .insert(tableName: $0)) }.sorted()
    }
}

extension Statement {
    /// Whether SQLite's statement still has these columns (it re-prepares
    /// itself after a schema change, keeping its handle).
    fileprivate func hasSameColumns(as columns: [String]) -> Bool {
        let count = Int(sqlite3_column_count(sqliteStatement))
        guard count == columns.count else { return false }
        for index in 0..<count
        where String(cString: sqlite3_column_name(sqliteStatement, Int32(index))) != columns[index] {
            return false
        }
        return true
    }
}
