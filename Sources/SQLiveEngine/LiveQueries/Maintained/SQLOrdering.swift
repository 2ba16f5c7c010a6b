import Foundation

/// SQLite's order of values under the BINARY collation (datatype3 §4.1):
/// NULL first, then INTEGER and REAL by numeric value, then TEXT by its
/// bytes, then BLOB by its bytes.
enum SQLOrdering {
    /// -1, 0 or 1.
    static func compare(_ a: SQLValue, _ b: SQLValue) -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.integer(let x), .integer(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.real(let x), .real(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.integer(let x), .real(let y)): return -compare(real: y, integer: x)
        case (.real(let x), .integer(let y)): return compare(real: x, integer: y)
        case (.integer, _), (.real, _): return -1
        case (_, .integer), (_, .real): return 1
        case (.text(let x), .text(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.text, .blob): return -1
        case (.blob, .text): return 1
        case (.blob(let x), .blob(let y)): return bytes(Array(x), Array(y))
        default: return 0
        }
    }

    /// A REAL against an INTEGER, exactly (a 64-bit integer need not fit a double).
    private static func compare(real: Double, integer: Int64) -> Int {
        if real < -9.223372036854775808e18 { return -1 }
        if real >= 9.223372036854775808e18 { return 1 }
        let whole = Int64(real.rounded(.towardZero))
        if whole != integer { return whole < integer ? -1 : 1 }
        let fraction = real - Double(whole)
        return fraction < 0 ? -1 : fraction > 0 ? 1 : 0
    }

    private static func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        let count = min(x.count, y.count)
        for index in 0..<count where x[index] != y[index] {
            return x[index] < y[index] ? -1 : 1
        }
        return x.count == y.count ? 0 : x.count < y.count ? -1 : 1
    }

    /// Two sort keys under ORDER BY terms (direction, where NULLs go).
    static func compare(_ a: [SQLValue], _ b: [SQLValue], _ terms: [MaintainedPlan.OrderTerm]) -> Int {
        for (index, term) in terms.enumerated() {
            let (x, y) = (a[index], b[index])
            if x.isNull != y.isNull {
                return x.isNull == term.nullsFirst ? -1 : 1
            }
            var order = compare(x, y)
            if term.descending { order = -order }
            if order != 0 { return order }
        }
        return 0
    }
}
