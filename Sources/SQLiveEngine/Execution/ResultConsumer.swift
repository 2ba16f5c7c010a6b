/// Receives a script's results as they are read, statement by statement.
///
/// Renderers conform to stream rows to their output without holding a
/// result in memory. The methods are called on the database thread, in
/// order: for each statement, `statementDidStart`, then `consume(row:)` per
/// row, then `statementDidFinish`. Throwing stops the script. A row is a
/// view on the statement, valid only during the call that receives it.
public protocol ResultConsumer {
    mutating func statementDidStart(_ header: StatementHeader) throws
    mutating func consume(row: StatementRow) throws
    mutating func statementDidFinish(_ summary: StatementSummary) throws
    /// Called once a statement has stepped for the last time (it ended, or
    /// failed while stepping), before it is reset or finalized, with the
    /// statement and its connection: for a consumer that reads SQLite's
    /// status counters, as the sqlite3 shell's `.stats` does. The handles
    /// are valid during the call only. The default does nothing.
    mutating func statementDidStep(_ statement: RanStatement) throws
}

extension ResultConsumer {
    public mutating func statementDidStep(_ statement: RanStatement) throws {}
}

/// A statement that has run, still prepared, and its connection: raw
/// SQLite handles, valid only during `ResultConsumer.statementDidStep`.
public struct RanStatement {
    /// The `sqlite3_stmt`.
    public let statement: OpaquePointer
    /// The `sqlite3` connection it runs on.
    public let connection: OpaquePointer
}

/// Collects a script's results in memory.
public struct ResultCollector: ResultConsumer, Sendable {
    public private(set) var results: [StatementResult] = []

    public init() {}

    public mutating func statementDidStart(_ header: StatementHeader) {
        results.append(StatementResult(sql: header.sql, columns: header.columns, rows: []))
    }

    public mutating func consume(row: StatementRow) {
        results[results.count - 1].rows.append(row.values)
    }

    public mutating func statementDidFinish(_ summary: StatementSummary) {
        results[results.count - 1].truncated = summary.truncated
        results[results.count - 1].changes = summary.changes
        results[results.count - 1].elapsed = summary.elapsed
    }
}
