/// The start of one statement's result: what a renderer needs before rows.
public struct StatementHeader: Hashable, Sendable {
    /// The 0-based index of the statement in its script.
    public var index: Int
    /// The statement's SQL, without surrounding whitespace and semicolons.
    public var sql: String
    /// The result's column names; empty for statements that return no rows.
    public var columns: [String]
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
