/// The start of one statement's result: what a renderer needs before rows.
public struct StatementHeader: Hashable, Sendable {
    /// The 0-based index of the statement in its script.
    public var index: Int
    /// Where the statement is in its script: UTF-8 offsets, from the end of
    /// the statement before it (leading whitespace and comments included)
    /// to the end of its own text.
    public var range: Range<Int>
    /// The result's column names; empty for statements that return no rows.
    public var columns: [String]
    /// The script the statement is part of.
    private var script: String

    public init(index: Int, script: String, range: Range<Int>, columns: [String]) {
        self.index = index
        self.script = script
        self.range = range
        self.columns = columns
    }

    /// Whether the statement belongs to this script (several scripts may
    /// share one consumer: `LiveDatabase.run(scripts:)`).
    public func belongs(to script: String) -> Bool {
        self.script == script
    }

    /// The statement's SQL, without surrounding whitespace and semicolons.
    ///
    /// Made when asked: a script of many statements does not pay for it.
    public var sql: String {
        SQLText.trimmed(script.utf8.dropFirst(range.lowerBound).prefix(range.count))
    }
}

/// Helpers for statement text.
enum SQLText {
    /// The text without surrounding whitespace and semicolons, as GRDB and
    /// sqlite3 show a statement.
    static func trimmed(_ utf8: Substring.UTF8View) -> String {
        func isTrimmed(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C || byte == 0x3B
        }
        guard let first = utf8.firstIndex(where: { !isTrimmed($0) }),
            let last = utf8.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(Substring(utf8[first...last]))
    }
}

/// The end of one statement's result.
public struct StatementSummary: Hashable, Sendable {
    public var index: Int
    /// Rows returned (at most the row limit).
    public var rowCount: Int
    /// Whether rows were left unread because of the row limit.
    public var truncated: Bool
    /// Rows inserted, updated or deleted by the statement (`sqlite3_changes`).
    public var changes: Int
    /// Time spent preparing, stepping and reading the statement.
    public var elapsed: Duration
    /// SQLite's counters for the run.
    public var counters = StatementCounters()
}

/// The whole result of one statement, collected in memory.
public struct StatementResult: Hashable, Sendable {
    public var sql: String
    public var columns: [String]
    public var rows: [[SQLValue]]
    /// Whether rows were left unread because of the row limit.
    public var truncated: Bool
    public var changes: Int
    public var elapsed: Duration

    public init(
        sql: String, columns: [String], rows: [[SQLValue]], truncated: Bool = false, changes: Int = 0,
        elapsed: Duration = .zero
    ) {
        self.sql = sql
        self.columns = columns
        self.rows = rows
        self.truncated = truncated
        self.changes = changes
        self.elapsed = elapsed
    }
}

/// A script failed part way: the results of the statements that ran, and the failure.
///
/// Statements before the failing one stay applied, as in sqlite3.
public struct ScriptFailure: Error, Sendable {
    public var completed: [StatementResult]
    public var failure: SQLiteFailure
}
