import Foundation
import GRDB
import GRDBSQLite

extension SQLValue {
    /// Creates a value from GRDB's storage, keeping the storage class.
    init(_ dbValue: DatabaseValue) {
        switch dbValue.storage {
        case .null: self = .null
        case .int64(let value): self = .integer(value)
        case .double(let value): self = .real(value)
        case .string(let value): self = .text(value)
        case .blob(let value): self = .blob(value)
        }
    }

    /// The value as GRDB binds it into a statement.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let value): value.databaseValue
        }
    }
}

extension SQLValue {
    /// The current row of a stepped statement, read with `sqlite3_column_*`.
    ///
    /// This is the hot path of every result sqlive prints: it skips GRDB's
    /// row and `DatabaseValue` layers, and keeps storage classes as SQLite
    /// reports them.
    /// What a statement's current row weighs printed (`printedByteCount`),
    /// read from SQLite without copying a value.
    static func printedByteCount(of statement: SQLiteStatement, columnCount: Int) -> Int {
        var total = 2
        for index in 0..<Int32(columnCount) {
            switch sqlite3_column_type(statement, index) {
            case SQLITE_INTEGER: total += SQLValue.integer(sqlite3_column_int64(statement, index)).printedByteCount
            case SQLITE_FLOAT: total += SQLValue.printedRealBytes
            case SQLITE_TEXT:
                _ = sqlite3_column_text(statement, index)
                total += SQLValue.printedByteCount(textBytes: Int(sqlite3_column_bytes(statement, index)))
            case SQLITE_BLOB:
                total += SQLValue.printedByteCount(blobBytes: Int(sqlite3_column_bytes(statement, index)))
            default: total += SQLValue.null.printedByteCount
            }
        }
        return total
    }

    static func row(of statement: SQLiteStatement, columnCount: Int) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(columnCount)
        for index in 0..<Int32(columnCount) {
            switch sqlite3_column_type(statement, index) {
            case SQLITE_INTEGER:
                values.append(.integer(sqlite3_column_int64(statement, index)))
            case SQLITE_FLOAT:
                values.append(.real(sqlite3_column_double(statement, index)))
            case SQLITE_TEXT:
                let bytes = sqlite3_column_text(statement, index)
                let count = Int(sqlite3_column_bytes(statement, index))
                values.append(
                    .text(
                        bytes.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
                            ?? ""))
            case SQLITE_BLOB:
                let bytes = sqlite3_column_blob(statement, index)
                let count = Int(sqlite3_column_bytes(statement, index))
                values.append(.blob(bytes.map { Data(bytes: $0, count: count) } ?? Data()))
            default:
                values.append(.null)
            }
        }
        return values
    }
}
