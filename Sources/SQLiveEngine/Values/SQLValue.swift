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

    /// The SQLite name of the storage class: `null`, `integer`, `real`, `text` or `blob`.
    public var storageClass: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }

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

    /// Formats a REAL the way sqlite3 does (`%!.15g`): integral values keep
    /// a trailing `.0`, others use up to 15 significant digits.
    ///
    /// This runs once per REAL cell of every printed result, so it formats
    /// with C's `snprintf` (through a small C function, not `withVaList`)
    /// into a stack buffer.
    public static func format(real value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "Inf" }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { buffer in
            let count = sqlive_format_real(value, buffer.baseAddress!, 32)
            let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress!, count: Int(max(0, min(count, 31))))
            var text = String(decoding: bytes, as: UTF8.self)
            if !bytes.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) {
                text += ".0"
            }
            return text
        }
    }
}
