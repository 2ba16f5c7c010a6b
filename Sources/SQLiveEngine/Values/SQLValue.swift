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
        withFormatted(real: value) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with a REAL formatted as `format(real:)` formats it, in
    /// a stack buffer (valid only during the call): renderers copy it to
    /// their output without making a string.
    public static func withFormatted<R>(real value: Double, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows
        -> R
    {
        if !value.isFinite {
            var text = value.isNaN ? "NaN" : value < 0 ? "-Inf" : "Inf"
            return try text.withUTF8(body)
        }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            let count = buffer.withMemoryRebound(to: CChar.self) {
                Int(sqlive_format_real(value, $0.baseAddress!, 48))
            }
            return try body(UnsafeBufferPointer(rebasing: buffer[..<max(0, min(count, 47))]))
        }
    }
}
