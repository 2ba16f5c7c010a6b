import CSQLiveSupport
import Foundation

/// A value read from or bound into SQLite, with its storage class kept.
///
/// SQLite has five storage classes, and sqlive keeps them distinct all the
/// way to the front ends: `NULL` is never an empty string, an `INTEGER` is an
/// exact 64-bit integer, never a `Double`, and a `BLOB` is bytes, never text.
///
/// ```swift
/// let values: [SQLValue] = [.null, .integer(Int64.max), .real(0.5), .text("Blob"), .blob(Data([0xFF]))]
/// ```
public enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// Whether the value is SQL `NULL`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension SQLValue: CustomStringConvertible {
    /// The value as the sqlite3 CLI prints it in list mode: `NULL` is empty,
    /// a real keeps up to 15 significant digits, a blob is its bytes as text.
    public var description: String {
        switch self {
        case .null: ""
        case .integer(let value): String(value)
        case .real(let value): SQLValue.format(real: value)
        case .text(let value): value
        case .blob(let data): String(decoding: data, as: UTF8.self)
        }
    }

    /// Formats a REAL exactly as the sqlite3 shell does (SQLite's `%!.15g`):
    /// up to 15 significant digits, and always a decimal point, as in `1.0`,
    /// `0.333333333333333` or `1.0e+20`.
    ///
    /// This runs once per REAL cell of every printed result, so it calls
    /// SQLite's own formatter through a small C function, into a stack buffer.
    public static func format(real value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "Inf" }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 48) { buffer in
            let count = Int(sqlive_format_real(value, buffer.baseAddress!, 48))
            return String(
                decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: max(0, min(count, 47))),
                as: UTF8.self)
        }
    }
}
