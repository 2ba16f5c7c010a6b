import CSQLiveSupport
import Foundation
import GRDBSQLite
import SQLiveLocks

extension SQLChecker {
    /// A raw SQLite connection, used only under the checker's mutex.
    final class Connection {
        private let raw: RawConnection
        var handle: OpaquePointer { raw.handle }

        /// A failure, its code the primary one.
        typealias Failure = RawSQLiteError

        enum Prepared {
            case prepared(RawStatement)
            case failed(Failure)
        }

        private init(_ raw: RawConnection) {
            self.raw = raw
            sqlive_set_double_quoted_strings(raw.handle, 0)
        }

        /// Opens a file read-only; where that is refused (a WAL database
        /// whose shared-memory file cannot be created read-only), read-write
        /// with `query_only` on. Never creates the file.
        static func openReadOnly(_ path: String, busyTimeout: Duration) throws(SQLiveError) -> Connection {
            try SpecialFiles.refuse(DatabaseLocation(path).filePath ?? path)
            var failure = "cannot open"
            for flags in [SQLITE_OPEN_READONLY, SQLITE_OPEN_READWRITE] {
                let raw: RawConnection
                do {
                    // Through the observer VFS: no lock held on a
                    // rollback-journal file, each read proven whole or read again.
                    raw = try RawConnection(
                        path: path, flags: flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                        vfs: ObserverVFS.isRegistered ? ObserverVFS.observer : nil)
                } catch {
                    failure = error.message
                    continue
                }
                let connection = Connection(raw)
                sqlite3_busy_timeout(raw.handle, Int32(busyTimeout / .milliseconds(1)))
                if flags == SQLITE_OPEN_READWRITE { connection.execute("PRAGMA query_only = ON") }
                // Reading the schema tells a database from any other file.
                switch connection.prepare(Array("SELECT 1 FROM sqlite_schema".utf8)[...]) {
                case .failed(let error):
                    failure = error.message
                    continue
                case .prepared:
                    // Finalized as it goes, or the connection could never
                    // close (a zombie holding its file open).
                    break
                }
                if connection.rows("SELECT count(*) FROM sqlite_schema").isEmpty {
                    failure = connection.lastError
                    continue
                }
                // Shared by every document, hover and request: a PRAGMA
                // that would set something (many act as they are prepared:
                // `locking_mode=EXCLUSIVE` would hide other writers' commits
                // from it for good) is refused, never prepared.
                sqlive_keep_connection_state(raw.handle)
                return connection
            }
            throw .cannotOpen(path: path, reason: failure)
        }

        /// An in-memory database holding these `CREATE` statements (those that
        /// fail, such as a virtual table's own tables, are left out).
        static func copyingSchema(_ statements: [String]) throws(SQLiveError) -> Connection {
            let connection: Connection
            do {
                connection = Connection(try RawConnection.inMemory())
            } catch {
                throw .cannotOpen(path: ":memory:", reason: "cannot open an in-memory database: \(error.message)")
            }
            for statement in statements { connection.execute(statement) }
            return connection
        }

        var lastError: String { raw.lastError }

        /// Whether the last call failed because a writer overtook its read
        /// (observer VFS): then it is made again, at most
        /// `ObserverVFS.maximumAttempts` times.
        func wasOvertaken(attempt: Int) -> Bool {
            guard attempt < ObserverVFS.maximumAttempts else { return false }
            let code = sqlite3_extended_errcode(handle)
            guard code == ObserverVFS.ioErrorRead || code == ObserverVFS.readonlyRollback else { return false }
            if code == ObserverVFS.readonlyRollback { usleep(UInt32(min(attempt, 10)) * 1000) }
            return true
        }

        /// Prepares the first statement of the bytes (again when a writer
        /// overtook it): the statement, `nil` for blanks and comments, and
        /// the offset of the byte after it.
        func prepareFirst(_ bytes: ArraySlice<UInt8>) -> Result<(statement: RawStatement?, end: Int), Failure> {
            for attempt in 1... {
                let result = bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { RawStatement.first(of: $0, on: handle) }
                }
                guard case .failure(var failure) = result else { return result }
                guard wasOvertaken(attempt: attempt) else {
                    failure.code &= 0xFF
                    return .failure(failure)
                }
            }
            fatalError("unreachable")
        }

        /// Prepares the first statement of the bytes.
        func prepare(_ bytes: ArraySlice<UInt8>) -> Prepared {
            switch prepareFirst(bytes) {
            case .success((let statement?, _)):
                return .prepared(statement)
            case .success:
                // Only blanks and comments: nothing to judge.
                return .failed(Failure(code: SQLITE_MISUSE, message: "no statement"))
            case .failure(var failure):
                if failure.code == SQLITE_AUTH, let name = ConnectionSetting.pragmaName(in: bytes) {
                    failure.message = ConnectionSetting.refusal(pragma: name)
                }
                return .failed(failure)
            }
        }

        /// Whether the text prepares with double-quoted strings allowed.
        func preparesWithDoubleQuotedStrings(_ bytes: ArraySlice<UInt8>) -> Bool {
            sqlive_set_double_quoted_strings(handle, 1)
            defer { sqlive_set_double_quoted_strings(handle, 0) }
            guard case .prepared = prepare(bytes) else { return false }
            return true
        }

        /// `EXPLAIN QUERY PLAN` of one statement: prepared, never run.
        func queryPlan(_ sql: String) throws(SQLiveError) -> QueryPlan {
            let bytes = Array(("EXPLAIN QUERY PLAN " + sql).utf8)
            switch prepare(bytes[...]) {
            case .failed(let failure):
                throw .sqlite(
                    SQLiteFailure(
                        code: failure.code, extendedCode: failure.code, message: failure.message,
                        offset: failure.offset.map { max(0, $0 - 19) }))
            case .prepared(let prepared):
                let nodes = rows(of: prepared) { statement in
                    QueryPlan.Node(
                        id: Int(sqlite3_column_int64(statement, 0)), parent: Int(sqlite3_column_int64(statement, 1)),
                        detail: sqlite3_column_text(statement, 3).map { String(cString: $0) } ?? "")
                }
                return QueryPlan(nodes: nodes)
            }
        }

        /// Runs a schema change prepared on this (in-memory) connection.
        func apply(_ statement: RawStatement) {
            while statement.step() == SQLITE_ROW {}
        }

        /// Runs SQL, ignoring its outcome.
        func execute(_ sql: String) {
            for attempt in 1... {
                guard sqlite3_exec(handle, sql, nil, nil, nil) != SQLITE_OK, wasOvertaken(attempt: attempt) else {
                    break
                }
            }
        }

        /// Starts a read, which makes SQLite notice a schema changed by
        /// another connection, so that the next prepare sees it.
        func refreshSchema() {
            execute("SELECT 1 FROM sqlite_schema LIMIT 1")
        }

        func schemaVersion() -> Int64 {
            rows("PRAGMA schema_version").first?.first.flatMap { $0.flatMap { Int64($0) } } ?? -1
        }

        /// The rows of a query, every value as text.
        func rows(_ sql: String, _ arguments: [String] = []) -> [[String?]] {
            guard case .prepared(let prepared) = prepare(Array(sql.utf8)[...]) else { return [] }
            let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
            for (index, argument) in arguments.enumerated() {
                sqlite3_bind_text(prepared.handle, Int32(index + 1), argument, -1, transient)
            }
            let count = Int32(prepared.columnCount)
            return rows(of: prepared) { statement in
                (0..<count).map { column in sqlite3_column_text(statement, column).map { String(cString: $0) } }
            }
        }

        /// Steps a statement to its end, reading each row; read again from
        /// the start when a writer overtook it (`wasOvertaken`).
        func rows<Row>(of prepared: RawStatement, _ read: (OpaquePointer) -> Row) -> [Row] {
            let statement = prepared.handle
            defer { withExtendedLifetime(prepared) {} }
            var rows: [Row] = []
            for attempt in 1... {
                rows = []
                var code = sqlite3_step(statement)
                while code == SQLITE_ROW {
                    rows.append(read(statement))
                    code = sqlite3_step(statement)
                }
                guard code != SQLITE_DONE, wasOvertaken(attempt: attempt) else { break }
                sqlite3_reset(statement)
            }
            return rows
        }

        /// The schema's objects that have SQL, in the order they were made.
        func schemaObjects() -> [SchemaObject] {
            rows(
                """
                SELECT type, name, tbl_name, sql FROM sqlite_schema
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid
                """
            ).compactMap { row in
                guard let type = row[0], let name = row[1], let table = row[2], let sql = row[3] else { return nil }
                return SchemaObject(type: type, name: name, table: table, sql: sql)
            }
        }

        /// The `CREATE` statements of the schema, in the order they were made.
        func schemaStatements() -> [String] {
            rows(
                """
                SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                ORDER BY rowid
                """
            ).compactMap { $0.first ?? nil }
        }

        func readCatalog() -> SQLCatalog {
            let relations = rows(
                """
                SELECT name, type FROM sqlite_schema
                WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
                """)
            let statistics = Dictionary(
                rows("SELECT tbl, stat FROM sqlite_stat1 WHERE idx IS NULL OR idx = tbl").compactMap {
                    row -> (String, Int)? in
                    guard let table = row[0], let stat = row[1],
                        let count = stat.split(separator: " ").first.flatMap({ Int($0) })
                    else { return nil }
                    return (table.lowercased(), count)
                }, uniquingKeysWith: { first, _ in first })
            return SQLCatalog(
                relations: relations.compactMap { row in
                    guard let name = row[0], let type = row[1] else { return nil }
                    let columns = rows(
                        "SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?)", [name]
                    ).compactMap { column -> SchemaInfo.Column? in
                        guard let columnName = column[0], column[4] == "0" || column[4] == nil else { return nil }
                        return SchemaInfo.Column(
                            name: columnName, type: column[1] ?? "", notNull: column[2] == "1",
                            primaryKeyIndex: Int(column[3] ?? "0") ?? 0)
                    }
                    let indexes = rows(
                        "SELECT name, \"unique\", origin FROM pragma_index_list(?) ORDER BY name", [name]
                    )
                    .compactMap { index -> SQLCatalog.Index? in
                        guard let indexName = index[0] else { return nil }
                        let columns = rows("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [indexName])
                            .map { $0.first.flatMap { $0 } ?? "<expression>" }
                        return SQLCatalog.Index(
                            name: indexName, columns: columns, isUnique: index[1] == "1", origin: index[2] ?? "c")
                    }
                    return SQLCatalog.Relation(
                        name: name, kind: type == "view" ? .view : .table, columns: columns, indexes: indexes,
                        estimatedRows: statistics[name.lowercased()])
                })
        }
    }
}
