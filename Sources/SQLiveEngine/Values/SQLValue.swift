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

extension SQLValue {
    /// Values are equal as SQLite stores them, byte for byte: a text equals
    /// another only with the same UTF-8 bytes (Swift's `String ==` calls a
    /// text in another Unicode normal form equal — NFC and NFD `café` —
    /// where SQLite sees other bytes, another `length` and another order),
    /// and a real another only with the same bits (`-0.0` is not `0.0`).
    public static func == (lhs: SQLValue, rhs: SQLValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)): a.bitPattern == b.bitPattern
        case (.text(let a), .text(let b)): a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }

    /// Hashes the bytes `==` compares.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .integer(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .real(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value.bitPattern)
        case .text(var value):
            hasher.combine(3 as UInt8)
            hasher.combine(value.utf8.count)
            value.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .blob(let data):
            hasher.combine(4 as UInt8)
            hasher.combine(data)
        }
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
