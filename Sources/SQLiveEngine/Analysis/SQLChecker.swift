import CSQLiveSupport
import Foundation
import GRDBSQLite
import SQLiveLocks

/// Judges SQL the way SQLite does, without running it: each statement of
/// a text is prepared on a read-only connection of the checker's own,
/// against the database's real schema.
///
/// The editor's diagnostics, completion, hover and plans come from here.
/// The connection is not the session's, so a long statement there never
/// delays a check, and a check can never change the database: it is opened
/// read-only (or `query_only` where a read-only open is refused), and
/// statements are only prepared. `EXPLAIN QUERY PLAN` is the one thing
/// stepped, and it runs nothing.
///
/// Statements that change the schema (`CREATE`, `ALTER`, `DROP`) are, once
/// they prepare, applied to a private in-memory copy of the schema, and the
/// statements after them are prepared there: a migration that creates a
/// table and fills it is judged as it will run.
///
/// Double-quoted string literals are off on the checker's connections, so
/// `SELECT "nope" FROM t` fails as "no such column"; when that is the only
/// failure, the problem is a warning, as SQLite would run the statement.
///
/// ```swift
/// let checker = try SQLChecker(path: "games.sqlite")
/// checker.check(SQLSource("SELECT * FROM nope;"))
/// // [Problem(severity: .error, range: 14..<18, message: "no such table: nope", ...)]
/// ```
public final class SQLChecker: Sendable {
    /// What is wrong with a statement.
    public struct Problem: Hashable, Sendable {
        public enum Severity: Hashable, Sendable {
            case error, warning, information
        }
        public var severity: Severity
        /// Where, in bytes of the checked text.
        public var range: Range<Int>
        public var message: String
        /// SQLite's primary result code.
        public var code: Int32
        /// The result code's name, as `"SQLITE_ERROR"`.
        public var codeName: String {
            switch code {
            case SQLITE_ERROR: "SQLITE_ERROR"
            case SQLITE_AUTH: "SQLITE_AUTH"
            case SQLITE_RANGE: "SQLITE_RANGE"
            case SQLITE_NOMEM: "SQLITE_NOMEM"
            case SQLITE_BUSY: "SQLITE_BUSY"
            case SQLITE_LOCKED: "SQLITE_LOCKED"
            case SQLITE_CORRUPT: "SQLITE_CORRUPT"
            case SQLITE_NOTADB: "SQLITE_NOTADB"
            case SQLITE_TOOBIG: "SQLITE_TOOBIG"
            default: "SQLITE_\(code)"
            }
        }
    }

    /// Where the checker reads its schema from.
    public enum Source: Hashable, Sendable {
        /// A database file, opened read-only.
        case file(String)
        /// A copy of these `CREATE` statements, in memory: for databases
        /// that have no file (`:memory:`).
        case schema([String])
    }

    // Mutable State: the connection is used by one caller at a time,
    // under the mutex; the catalog is a cache of what it read, dropped
    // when the schema version changes.
    struct State {
        var connection: Connection
        var catalog: (version: Int64, catalog: SQLCatalog)?
        var functions: [String]?
        /// Tables' row counts (-1: too many to count), valid while the
        /// connection's `data_version` is `version`.
        var rowCounts: (version: Int64, counts: [String: Int]) = (-1, [:])
        /// The schema's objects, in the order they were made, valid while
        /// the schema version is `version` (read once per schema change, not
        /// once per piece of advice: 1,000 tables take milliseconds).
        var objects: (version: Int64, objects: [SchemaObject])?
    }
    let state: Locked<State>

    /// One row of `sqlite_schema`, as the index advisor copies it.
    struct SchemaObject {
        var type: String
        var name: String
        var table: String
        var sql: String
    }

    public let source: Source

    /// Opens the checker's connection.
    ///
    /// - throws: `SQLiveError.cannotOpen` when the file is missing or is
    ///   not a database.
    /// - parameter busyTimeout: how long a read waits for another
    ///   connection's lock (none where the caller holds it itself).
    public init(_ source: Source, busyTimeout: Duration = .seconds(2)) throws(SQLiveError) {
        self.source = source
        let connection: Connection
        switch source {
        case .file(let path):
            connection = try Connection.openReadOnly(path, busyTimeout: busyTimeout)
        case .schema(let statements):
            connection = try Connection.copyingSchema(statements)
        }
        state = Locked(State(connection: connection))
    }

    // MARK: - Diagnostics

    /// Prepares every statement of the text and reports each failure.
    public func check(_ source: SQLSource) -> [Problem] {
        state.withLock { state in
            let real = state.connection
            real.refreshSchema()
            var copy: Connection?
            var problems: [Problem] = []
            for statement in source.statements {
                let connection = copy ?? real
                let bytes = source.bytes[statement.range]
                switch connection.prepare(bytes) {
                case .prepared(let prepared):
                    defer { sqlite3_finalize(prepared) }
                    guard Self.changesSchema(source, statement, prepared) else { continue }
                    if copy == nil {
                        // The first schema change: the rest is judged on a copy.
                        copy = try? Connection.copyingSchema(real.schemaStatements())
                        guard let copy else { continue }
                        if case .prepared(let again) = copy.prepare(bytes) {
                            copy.apply(again)
                        }
                    } else {
                        connection.apply(prepared)
                    }
                case .failed(let failure) where failure.code != SQLITE_MISUSE:
                    problems.append(Self.problem(failure, in: source, statement, connection: connection))
                case .failed:
                    continue
                }
            }
            return problems
        }
    }

    /// Whether a prepared statement changes the schema.
    private static func changesSchema(_ source: SQLSource, _ statement: SQLSource.Statement, _ prepared: OpaquePointer)
        -> Bool
    {
        guard sqlite3_stmt_readonly(prepared) == 0 else { return false }
        switch source.firstWord(of: statement) {
        case "CREATE", "ALTER", "DROP": return true
        default: return false
        }
    }

    /// The problem a failed prepare reports, placed in the text.
    private static func problem(
        _ failure: Connection.Failure, in source: SQLSource, _ statement: SQLSource.Statement, connection: Connection
    ) -> Problem {
        var severity = Problem.Severity.error
        var message = failure.message
        // A double-quoted word SQLite would have read as a string.
        if failure.message.hasPrefix("no such column: "),
            connection.preparesWithDoubleQuotedStrings(source.bytes[statement.range])
        {
            let word = String(failure.message.dropFirst("no such column: ".count))
            severity = .warning
            message =
                "\"\(word)\" is read as the string '\(word)', as no column has that name: "
                + "write '\(word)' for a string, or name an existing column"
        }
        let range = place(failure, in: source, statement)
        return Problem(severity: severity, range: range, message: message, code: failure.code)
    }

    /// Where a failure lies: the token at SQLite's offset, else the name the
    /// message gives, else the whole statement.
    static func place(_ failure: Connection.Failure, in source: SQLSource, _ statement: SQLSource.Statement)
        -> Range<Int>
    {
        let tokens = source.significantTokens(of: statement)
        if let offset = failure.offset, offset >= 0 {
            let position = statement.range.lowerBound + min(offset, statement.range.count)
            if let found = tokens.firstIndex(where: { source.tokens[$0].range.upperBound > position }) {
                let index = tokens[found]
                // SQLite points at a qualified name's qualifier (`a` of
                // `a.zz3`): the range covers the name it is about.
                if let name = namedObject(in: failure.message), name.contains("."), found + 2 < tokens.count,
                    source.tokens[tokens[found + 1]].kind == .dot, source.tokens[tokens[found + 2]].isName,
                    source.name(of: source.tokens[tokens[found + 2]]).caseInsensitiveCompare(
                        String(name.split(separator: ".").last ?? "")) == .orderedSame
                {
                    return source.tokens[index].range.lowerBound..<source.tokens[tokens[found + 2]].range.upperBound
                }
                return source.tokens[index].range
            }
            if let last = tokens.last { return source.tokens[last].range }
        }
        if let name = namedObject(in: failure.message) {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let last = parts.last ?? name
            let qualifier = parts.count > 1 ? parts[parts.count - 2] : nil
            var fallback: Range<Int>?
            for (position, index) in tokens.enumerated() where source.tokens[index].isName {
                guard source.name(of: source.tokens[index]).caseInsensitiveCompare(last) == .orderedSame else {
                    continue
                }
                if let qualifier, position >= 2, source.tokens[tokens[position - 1]].kind == .dot,
                    source.name(of: source.tokens[tokens[position - 2]]).caseInsensitiveCompare(qualifier)
                        == .orderedSame
                {
                    return source.tokens[tokens[position - 2]].range.lowerBound..<source.tokens[index].range.upperBound
                }
                fallback = fallback ?? source.tokens[index].range
            }
            if let fallback { return fallback }
        }
        return statement.range
    }

    /// The name an error message is about, if it names one.
    static func namedObject(in message: String) -> String? {
        let prefixes = [
            "no such table: ", "no such column: ", "no such function: ", "ambiguous column name: ",
            "no such index: ", "no such view: ", "no such trigger: ", "no such collation sequence: ",
            "no such module: ", "no such savepoint: ", "unknown database ",
            "there is already another table or index with this name: ",
        ]
        for prefix in prefixes where message.hasPrefix(prefix) {
            return String(message.dropFirst(prefix.count))
        }
        // "table t has no column named x", "wrong number of arguments to function f()"
        if let range = message.range(of: " has no column named ") {
            return String(message[range.upperBound...])
        }
        if let range = message.range(of: "wrong number of arguments to function ") {
            return String(message[range.upperBound...].prefix { $0 != "(" })
        }
        // "table x already exists", "index x already exists"...
        for kind in ["table ", "index ", "view ", "trigger "] where message.hasPrefix(kind) {
            if let end = message.range(of: " already exists") {
                return String(message[message.index(message.startIndex, offsetBy: kind.count)..<end.lowerBound])
            }
        }
        return nil
    }

    // MARK: - Schema

    /// The tables and views, with columns and indexes; cached until the
    /// schema changes.
    public func catalog() -> SQLCatalog {
        state.withLock { state in
            let connection = state.connection
            connection.refreshSchema()
            let version = connection.schemaVersion()
            if let cached = state.catalog, cached.version == version { return cached.catalog }
            let catalog = connection.readCatalog()
            state.catalog = (version, catalog)
            return catalog
        }
    }

    /// SQLite's built-in and registered functions, sorted.
    public func functionNames() -> [String] {
        state.withLock { state in
            if let functions = state.functions { return functions }
            let names = state.connection.rows("SELECT DISTINCT name FROM pragma_function_list ORDER BY name")
                .compactMap { $0.first ?? nil }
            state.functions = names
            return names
        }
    }

    /// The names of the columns a query returns, or nil when it does not
    /// prepare (it is prepared, never run).
    public func columnNames(of query: String) -> [String]? {
        state.withLock { state in
            guard case .prepared(let prepared) = state.connection.prepare(Array(query.utf8)[...]) else { return nil }
            defer { sqlite3_finalize(prepared) }
            return (0..<sqlite3_column_count(prepared)).map { String(cString: sqlite3_column_name(prepared, $0)) }
        }
    }

    /// Whether a statement only reads (nil when it does not prepare).
    public func isReadOnly(_ sql: String) -> Bool? {
        state.withLock { state in
            guard case .prepared(let prepared) = state.connection.prepare(Array(sql.utf8)[...]) else { return nil }
            defer { sqlite3_finalize(prepared) }
            return sqlite3_stmt_readonly(prepared) != 0
        }
    }

    /// The statement's query plan, from `EXPLAIN QUERY PLAN`.
    public func explainQueryPlan(_ sql: String) throws(SQLiveError) -> QueryPlan {
        try state.withLock { state throws(SQLiveError) in
            state.connection.refreshSchema()
            return try state.connection.queryPlan(LiveDatabase.singleStatement(sql))
        }
    }
}

// MARK: - The connection

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
