import GRDBSQLite

/// Rows for `LiveDatabase.insertRows(into:schema:from:)`, made one at a time.
///
/// The engine calls a source on the session's connection, in order:
/// `createTableStatement(quotedName:)` once if the table does not exist,
/// then `next(into:)` for each row until it returns `false`; after a row
/// that SQLite refused (a constraint, say), `rowDidFail(_:)`, and the rows
/// go on. Throwing from any of them stops the insertion, and the rows
/// inserted so far are rolled back.
///
/// ```swift
/// struct Numbers: RowSource {
///     var next = 1
///     mutating func createTableStatement(quotedName: String) -> String? { "CREATE TABLE \(quotedName)(n)" }
///     mutating func next(into row: inout RowBinding) -> Bool {
///         guard next <= 1000 else { return false }
///         row.bind(.integer(Int64(next)), at: 0)
///         next += 1
///         return true
///     }
///     mutating func rowDidFail(_ failure: SQLiteFailure) {}
/// }
/// ```
public protocol RowSource {
    /// The statement that creates the missing table, or `nil` to fail with
    /// SQLite's "no such table". It runs in the insertion's transaction.
    ///
    /// - parameter quotedName: The table's name as SQL (schema included).
    mutating func createTableStatement(quotedName: String) throws -> String?

    /// Binds the next row's values; returns `false` when no row is left.
    ///
    /// Columns not bound are NULL.
    mutating func next(into row: inout RowBinding) throws -> Bool

    /// SQLite refused the last row bound; the insertion goes on with the next.
    mutating func rowDidFail(_ failure: SQLiteFailure)
}

/// The values of one row to insert: a view on the prepared `INSERT`, valid
/// only during the `RowSource.next(into:)` call that receives it.
public struct RowBinding {
    /// The number of values the `INSERT` takes: the table's columns.
    public let columnCount: Int
    private let statement: OpaquePointer

    init(statement: OpaquePointer, columnCount: Int) {
        self.statement = statement
        self.columnCount = columnCount
    }

    /// Binds UTF-8 text (bytes that are not UTF-8 are kept as they are, as
    /// the sqlite3 shell keeps them) to the 0-based column.
    public func bindText(_ bytes: UnsafeRawBufferPointer, at column: Int) {
        precondition(column >= 0 && column < columnCount, "column \(column) out of range")
        SQLValue.bindText(bytes, to: statement, at: Int32(column + 1))
    }

    /// Binds NULL to the 0-based column.
    public func bindNull(at column: Int) {
        precondition(column >= 0 && column < columnCount, "column \(column) out of range")
        sqlite3_bind_null(statement, Int32(column + 1))
    }

    /// Binds a value to the 0-based column.
    public func bind(_ value: SQLValue, at column: Int) {
        precondition(column >= 0 && column < columnCount, "column \(column) out of range")
        value.bind(to: statement, at: Int32(column + 1))
    }
}

/// What `LiveDatabase.insertRows(into:schema:from:)` did.
public struct RowInsertion: Hashable, Sendable {
    /// Rows inserted.
    public var inserted: Int
    /// Rows SQLite refused (each reported to `RowSource.rowDidFail(_:)`).
    public var failed: Int
    /// Whether the table was created.
    public var createdTable: Bool
}
