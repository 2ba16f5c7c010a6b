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
                    guard Self.changesSchema(source, statement, prepared.handle) else { continue }
                    if copy == nil {
                        // The first schema change: the rest is judged on a copy.
                        do {
                            copy = try Connection.copyingSchema(real.schemaStatements())
                        } catch {
                            // The rest is judged on the real schema.
                            Log.engine.warning("copying the schema to judge a document's DDL: \(error)")
                        }
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
        if failure.code == SQLITE_AUTH, ConnectionSetting.pragmaName(in: source.bytes[statement.range]) != nil {
            // Not wrong: not prepared on the shared connection (its message says why).
            severity = .information
        }
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
            return (0..<Int32(prepared.columnCount)).map { String(cString: sqlite3_column_name(prepared.handle, $0)) }
        }
    }

    /// Whether a statement only reads (nil when it does not prepare).
    public func isReadOnly(_ sql: String) -> Bool? {
        state.withLock { state in
            guard case .prepared(let prepared) = state.connection.prepare(Array(sql.utf8)[...]) else { return nil }
            return sqlite3_stmt_readonly(prepared.handle) != 0
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
