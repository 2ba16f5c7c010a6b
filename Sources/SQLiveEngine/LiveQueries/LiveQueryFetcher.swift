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
        /// The columns that identify a row, when asked (`keyColumns(of:_:)`).
        var keyColumns: [Int]?
        /// For a read at commit (`LocalPrefetch`): when its job began, before
        /// its snapshot was taken (`LocalPrefetch.reads`).
        var begunAt: Int?
        /// Where the file stood when it was read, at the latest: a result
        /// kept from rows is delivered only once it is that far
        /// (`MaintainedState`).
        var position: FilePosition?
    }

    /// A kept statement was prepared again by SQLite with other columns.
    struct PreparedStatementIsStale: Error {}

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
        knownRegion: DatabaseRegion?, recordsPages: Bool, wantsKey: Bool = false, byteCap: Int? = nil
    ) throws -> Fetched {
        guard recordsPages else {
            var fetched = try fetch(
                definition, db, rowCap: rowCap, tracer: tracer, knownRegion: knownRegion, wantsKey: wantsKey,
                byteCap: byteCap)
            fetched.position = FilePosition.latest(db.sqliteConnection)
            return fetched
        }
        var (fetched, dependency) = try ObserverVFS.recordingPages(db) {
            try fetch(
                definition, db, rowCap: rowCap, tracer: tracer, knownRegion: knownRegion, wantsKey: wantsKey,
                byteCap: byteCap)
        }
        fetched.dependency = dependency
        fetched.position = FilePosition.latest(db.sqliteConnection)
        return fetched
    }

    /// `fetch` without recording its pages.
    static func fetch(
        _ definition: LiveQueryDefinition, _ db: Database, rowCap defaultCap: Int, tracer: StatementTracer,
        knownRegion: DatabaseRegion?, wantsKey: Bool, byteCap: Int?, prepared: Statement? = nil
    ) throws -> Fetched {
        let rowCap = definition.maxRows ?? defaultCap
        var bytes = 0
        let clock = ContinuousClock()
        let start = clock.now
        let statement = try prepared ?? db.makeStatement(sql: definition.sql)
        // A statement kept for next time is reset however this ends: it
        // holds no read transaction open.
        defer { if prepared != nil { sqlite3_reset(statement.sqliteStatement) } }
        if !definition.parameters.isEmpty {
            try statement.setArguments(definition.parameters.statementArguments)
        }
        let region = statement.databaseRegion
        let columns = statement.columnNames
        var rows = ResultRowsBuilder()
        var truncated = false
        var total = 0
        let cursor = try Row.fetchCursor(statement)
        while try cursor.next() != nil {
            if rows.count >= rowCap {
                truncated = true
                break
            }
            if let byteCap {
                // Weighed before it is copied: memory stays bounded by the cap.
                bytes += SQLValue.printedByteCount(of: statement.sqliteStatement, columnCount: columns.count)
                if bytes > byteCap { throw SQLiveError.resultTooLarge(limit: byteCap) }
            }
            rows.append(statement: statement.sqliteStatement, columnCount: columns.count)
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
            // A kept statement's columns are its first preparation's: its
            // caller reads again on a new one.
            if prepared != nil { throw PreparedStatementIsStale() }
            // Prepared on a schema the connection had cached, and prepared
            // again by SQLite when its first step found the schema changed
            // (`ALTER TABLE … ADD COLUMN` under `SELECT *`): the rows were
            // read with the old column count. Read again, on the new schema.
            return try fetch(
                definition, db, rowCap: defaultCap, tracer: tracer, knownRegion: knownRegion, wantsKey: wantsKey,
                byteCap: byteCap)
        }
        let elapsed = clock.now - start
        let counters = StatementCounters(statement.sqliteStatement)
        tracer.record(sql: statement.sql, elapsed: elapsed, rows: rows.count, counters: counters, origin: .liveQuery)
        let tables = region == knownRegion ? nil : try self.tables(in: region, db)
        return Fetched(
            result: LiveQueryResult(columns: columns, rows: rows.rows, truncated: truncated, total: total),
            region: region,
            tables: tables, elapsed: elapsed, counters: counters,
            keyColumns: wantsKey ? keyColumns(of: statement.sqliteStatement, db.sqliteConnection!) : nil)
    }

    /// The tables a region reads, sorted; `*` for the full database.
    ///
    /// Asked of the region itself (`isModified(byEventsOfKind:)`) for each
    /// table of every schema the connection sees — main, temp, attached.
    static func tables(in region: DatabaseRegion, _ db: Database) throws -> [String] {
        if region.isFullDatabase { return ["*"] }
        if let named = namedTables(in: region) {
            return named.filter { !$0.lowercased().hasPrefix("sqlite_") }
        }
        let names = try String.fetchAll(
            db, sql: "SELECT DISTINCT name FROM pragma_table_list WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        return names.filter { region.isModified(byEventsOfKind: .insert(tableName: $0)) }.sorted()
    }

    /// The tables of a region read from its description
    /// (`players(name,score),games(*)[1,2]`), without asking the schema:
    /// `nil` when it cannot be read for sure (a table name with brackets,
    /// parentheses or commas), and then every table is asked.
    ///
    /// Each name found is checked against the region, and a name twice
    /// means one was split: every name a region reads is there exactly once.
    static func namedTables(in region: DatabaseRegion) -> [String]? {
        let description = region.description
        if description == "empty" { return [] }
        var names: [String] = []
        var rest = Substring(description)
        while !rest.isEmpty {
            guard let open = rest.firstIndex(of: "("), let close = rest[open...].firstIndex(of: ")") else { return nil }
            let name = rest[..<open]
            let columns = rest[rest.index(after: open)..<close]
            guard !name.isEmpty, !name.contains(where: { "()[],".contains($0) }),
                !columns.contains(where: { "()[]".contains($0) })
            else { return nil }
            names.append(String(name))
            rest = rest[rest.index(after: close)...]
            if rest.first == "[" {
                guard let end = rest.firstIndex(of: "]") else { return nil }
                guard !rest[rest.index(after: rest.startIndex)..<end].contains(where: { !"0123456789,-".contains($0) })
                else { return nil }
                rest = rest[rest.index(after: end)...]
            }
            if rest.first == "," {
                rest = rest.dropFirst()
                guard !rest.isEmpty else { return nil }
            } else if !rest.isEmpty {
                return nil
            }
        }
        guard Set(names.map { $0.lowercased() }).count == names.count,
            names.allSatisfy({ region.isModified(byEventsOfKind: .insert(tableName: $0)) })
        else { return nil }
        return names.sorted()
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

extension LiveQueryFetcher {
    /// The result columns that identify a row: every column of one table's
    /// primary key (or its rowid), as the statement returns them straight
    /// from that table. `nil` when no table's key is complete in the result.
    ///
    /// A join can repeat a table's key; `RowChanges` checks that the key is
    /// unique before it matches by it.
    static func keyColumns(of statement: OpaquePointer, _ connection: OpaquePointer) -> [Int]? {
        struct Origin: Hashable {
            var schema: String
            var table: String
        }
        var keyColumnsByTable: [Origin: [String: Int]] = [:]
        var order: [Origin] = []
        for column in 0..<Int(sqlite3_column_count(statement)) {
            guard let schema = sqlite3_column_database_name(statement, Int32(column)),
                let table = sqlite3_column_table_name(statement, Int32(column)),
                let name = sqlite3_column_origin_name(statement, Int32(column))
            else { continue }
            var primaryKey: Int32 = 0
            guard
                sqlite3_table_column_metadata(connection, schema, table, name, nil, nil, nil, &primaryKey, nil)
                    == SQLITE_OK, primaryKey != 0
            else { continue }
            let origin = Origin(schema: String(cString: schema), table: String(cString: table))
            if keyColumnsByTable[origin] == nil { order.append(origin) }
            let columnName = String(cString: name).lowercased()
            if keyColumnsByTable[origin]?[columnName] == nil {
                keyColumnsByTable[origin, default: [:]][columnName] = column
            }
        }
        for origin in order {
            let found = keyColumnsByTable[origin]!
            if primaryKeyWidth(origin.schema, origin.table, connection) == found.count {
                return found.values.sorted()
            }
        }
        return nil
    }

    /// How many columns a table's primary key has (1 for a rowid table
    /// without a declared one: the rowid).
    private static func primaryKeyWidth(_ schema: String, _ table: String, _ connection: OpaquePointer) -> Int {
        guard
            let statement = try? RawStatement(
                on: connection, "SELECT count(*) FROM pragma_table_info(?1, ?2) WHERE pk > 0")
        else { return -1 }
        SQLValue.text(table).bind(to: statement.handle, at: 1)
        SQLValue.text(schema).bind(to: statement.handle, at: 2)
        guard statement.step() == SQLITE_ROW else { return -1 }
        return max(1, Int(sqlite3_column_int64(statement.handle, 0)))
    }
}
