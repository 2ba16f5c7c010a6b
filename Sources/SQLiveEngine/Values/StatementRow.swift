import Foundation
import GRDBSQLite

/// The current row of a statement that is being stepped.
///
/// A view, not a copy: renderers read each column straight from SQLite, so
/// a million-row result is printed without an array or a string per row.
/// A row is valid only during the `ResultConsumer.consume(row:)` call that
/// receives it; keep `values` to hold on to it.
///
/// ```swift
/// mutating func consume(row: StatementRow) throws {
///     for column in 0..<row.count where row.type(at: column) == .text {
///         row.withUTF8(at: column) { output.append(contentsOf: $0) }
///     }
/// }
/// ```
public struct StatementRow: RowValues {
    private let statement: OpaquePointer
    /// The number of columns.
    public let count: Int

    init(_ statement: OpaquePointer, columnCount: Int) {
        self.statement = statement
        self.count = columnCount
    }

    /// What the row weighs printed as text (`SQLValue.printedByteCount`),
    /// without copying a value.
    public var printedByteCount: Int {
        SQLValue.printedByteCount(of: statement, columnCount: count)
    }

    /// The storage class of a column's value.
    @inline(__always)
    public func type(at column: Int) -> SQLStorageClass {
        switch sqlite3_column_type(statement, Int32(column)) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// A column's value as a 64-bit integer (SQLite converts other classes).
    @inline(__always)
    public func integer(at column: Int) -> Int64 {
        sqlite3_column_int64(statement, Int32(column))
    }

    /// A column's value as a double (SQLite converts other classes).
    @inline(__always)
    public func real(at column: Int) -> Double {
        sqlite3_column_double(statement, Int32(column))
    }

    /// Calls `body` with a text column's UTF-8 bytes (or a blob's bytes as
    /// text, as SQLite converts them), valid only during the call.
    @inline(__always)
    public func withUTF8<R>(at column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let bytes = sqlite3_column_text(statement, Int32(column))
        let count = Int(sqlite3_column_bytes(statement, Int32(column)))
        return try body(UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }

    /// Calls `body` with a blob column's bytes, valid only during the call.
    @inline(__always)
    public func withBlob<R>(at column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let bytes = sqlite3_column_blob(statement, Int32(column))
        let count = Int(sqlite3_column_bytes(statement, Int32(column)))
        return try body(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }

    /// The row's values, copied.
    public var values: [SQLValue] {
        SQLValue.row(of: statement, columnCount: count)
    }
}

/// SQLite's storage class of one value.
public enum SQLStorageClass: Sendable {
    case null, integer, real, text, blob
}

/// A row's values, read column by column: a row of a statement being
/// stepped (`StatementRow`), or values in memory (`[SQLValue]`).
///
/// Renderers are written once against it, and print a streamed row
/// without copying it.
public protocol RowValues {
    /// The number of columns.
    var count: Int { get }
    /// The storage class of a column's value.
    func type(at column: Int) -> SQLStorageClass
    /// An `INTEGER` column's value.
    func integer(at column: Int) -> Int64
    /// A `REAL` column's value.
    func real(at column: Int) -> Double
    /// Calls `body` with a `TEXT` column's UTF-8 bytes.
    func withUTF8<R>(at column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
    /// Calls `body` with a `BLOB` column's bytes.
    func withBlob<R>(at column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension RowValues {
    /// One column's value, copied.
    public func value(at column: Int) -> SQLValue {
        switch type(at: column) {
        case .null: .null
        case .integer: .integer(integer(at: column))
        case .real: .real(real(at: column))
        case .text: .text(withUTF8(at: column) { String(decoding: $0, as: UTF8.self) })
        case .blob: .blob(withBlob(at: column) { Data($0) })
        }
    }
}

extension Array: RowValues where Element == SQLValue {
    public func type(at column: Int) -> SQLStorageClass {
        switch self[column] {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }

    public func integer(at column: Int) -> Int64 {
        switch self[column] {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value.rounded(.towardZero)) ?? 0
        default: 0
        }
    }

    public func real(at column: Int) -> Double {
        switch self[column] {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: 0
        }
    }

    public func withUTF8<R>(at column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        switch self[column] {
        case .text(var text): return try text.withUTF8(body)
        case .blob(let data): return try data.withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
        case .null: return try body(UnsafeBufferPointer(start: nil, count: 0))
        case let value:
            var text = value.description
            return try text.withUTF8(body)
        }
    }

    public func withBlob<R>(at column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self[column] {
        case .blob(let data): return try data.withUnsafeBytes(body)
        case .null: return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        case let value:
            var text = value.description
            return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
    }
}
