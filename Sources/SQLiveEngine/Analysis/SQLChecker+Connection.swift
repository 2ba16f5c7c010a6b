import CSQLiveSupport
import Foundation
import GRDBSQLite
import SQLiveLocks

extension SQLChecker {
    /// A raw SQLite connection, used only under the checker's mutex.
    final class Connection {
        let handle: OpaquePointer

        struct Failure: Hashable {
            var code: Int32
            var message: String
            /// The byte of the prepared text SQLite blames, if it knows.
            var offset: Int?
        }

        enum Prepared {
            case prepared(OpaquePointer)
            case failed(Failure)
        }

        private init(handle: OpaquePointer) {
            self.handle = handle
            sqlive_set_double_quoted_strings(handle, 0)
        }

        deinit {
            sqlite3_close_v2(handle)
        }

        /// Opens a file read-only; where that is refused (a WAL database
        /// whose shared-memory file cannot be created read-only), read-write
        /// with `query_only` on. Never creates the file.
        static func openReadOnly(_ path: String, busyTimeout: Duration) throws(SQLiveError) -> Connection {
            var failure = "cannot open"
            for flags in [SQLITE_OPEN_READONLY, SQLITE_OPEN_READWRITE] {
                var handle: OpaquePointer?
                // Through the observer VFS: no lock held on a
                // rollback-journal file, each read proven whole or read again.
                let vfs = ObserverVFS.isRegistered ? ObserverVFS.observer : nil
                let code = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, vfs)
                guard code == SQLITE_OK, let handle else {
                    failure = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "cannot open"
                    sqlite3_close_v2(handle)
                    continue
                }
                let connection = Connection(handle: handle)
                sqlite3_busy_timeout(handle, Int32(busyTimeout / .milliseconds(1)))
                if flags == SQLITE_OPEN_READWRITE { connection.execute("PRAGMA query_only = ON") }
                // Reading the schema tells a database from any other file.
                switch connection.prepare(Array("SELECT 1 FROM sqlite_schema".utf8)[...]) {
                case .failed(let error):
                    failure = error.message
                    continue
                case .prepared(let statement):
                    // Finalized, or the connection could never close (a
                    // zombie holding its file open).
                    sqlite3_finalize(statement)
                }
                if connection.rows("SELECT count(*) FROM sqlite_schema").isEmpty {
                    failure = connection.lastError
                    continue
                }
                return connection
            }
            throw .cannotOpen(path: path, reason: failure)
        }

        /// An in-memory database holding these `CREATE` statements (those that
        /// fail, such as a virtual table's own tables, are left out).
        static func copyingSchema(_ statements: [String]) throws(SQLiveError) -> Connection {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
                let handle
            else {
                sqlite3_close_v2(handle)
                throw .cannotOpen(path: ":memory:", reason: "cannot open an in-memory database")
            }
            let connection = Connection(handle: handle)
            for statement in statements { connection.execute(statement) }
            return connection
        }

        var lastError: String {
            sqlite3_errmsg(handle).map { String(cString: $0) } ?? "unknown error"
        }

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

        /// Prepares the first statement of the bytes.
        func prepare(_ bytes: ArraySlice<UInt8>) -> Prepared {
            var statement: OpaquePointer?
            var code = SQLITE_OK
            for attempt in 1... {
                code = bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { text in
                        sqlite3_prepare_v3(handle, text.baseAddress, Int32(text.count), 0, &statement, nil)
                    }
                }
                guard code != SQLITE_OK, wasOvertaken(attempt: attempt) else { break }
            }
            // The offset is only good right after the failing call.
            let offset = Int(sqlite3_error_offset(handle))
            if code == SQLITE_OK, let statement { return .prepared(statement) }
            sqlite3_finalize(statement)
            if code == SQLITE_OK {
                // Only blanks and comments: nothing to judge.
                return .failed(Failure(code: SQLITE_MISUSE, message: "no statement", offset: nil))
            }
            return .failed(Failure(code: code & 0xFF, message: lastError, offset: offset >= 0 ? offset : nil))
        }

        /// Whether the text prepares with double-quoted strings allowed.
        func preparesWithDoubleQuotedStrings(_ bytes: ArraySlice<UInt8>) -> Bool {
            sqlive_set_double_quoted_strings(handle, 1)
            defer { sqlive_set_double_quoted_strings(handle, 0) }
            guard case .prepared(let statement) = prepare(bytes) else { return false }
            sqlite3_finalize(statement)
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
                defer { sqlite3_finalize(prepared) }
                let nodes = rows(of: prepared) { statement in
                    QueryPlan.Node(
                        id: Int(sqlite3_column_int64(statement, 0)), parent: Int(sqlite3_column_int64(statement, 1)),
                        detail: sqlite3_column_text(statement, 3).map { String(cString: $0) } ?? "")
                }
                return QueryPlan(nodes: nodes)
            }
        }

        /// Runs a schema change prepared on this (in-memory) connection.
        func apply(_ statement: OpaquePointer) {
            while sqlite3_step(statement) == SQLITE_ROW {}
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
            guard case .prepared(let statement) = prepare(Array(sql.utf8)[...]) else { return [] }
            defer { sqlite3_finalize(statement) }
            let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
            for (index, argument) in arguments.enumerated() {
                sqlite3_bind_text(statement, Int32(index + 1), argument, -1, transient)
            }
            let count = sqlite3_column_count(statement)
            return rows(of: statement) { statement in
                (0..<count).map { column in sqlite3_column_text(statement, column).map { String(cString: $0) } }
            }
        }

        /// Steps a statement to its end, reading each row; read again from
        /// the start when a writer overtook it (`wasOvertaken`).
        private func rows<Row>(of statement: OpaquePointer, _ read: (OpaquePointer) -> Row) -> [Row] {
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
