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
