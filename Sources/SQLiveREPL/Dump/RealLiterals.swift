import CSQLiveSupport
import GRDBSQLite
import SQLiveEngine

/// SQL literals for REAL values that SQLite reads back as exactly the same
/// number.
///
/// The sqlite3 shell's `.dump` writes a REAL as `%!.20g` (or `N.0` when it
/// is integral, `1e999` for infinity). SQLite 3.40 reads decimal text with
/// its own converter, which does not reach every double: about 0.3% of
/// random doubles, all of them below 1e-289, come back as a neighbour from
/// the shell's text, and from any other decimal of 15 to 26 digits. So a
/// literal is the shell's text when SQLite reads it back exactly — SQLite
/// itself is asked, on a private in-memory connection — else another
/// precision that it reads back exactly, else the value scaled into range
/// by an exact power of two, times that power's inverse as often as needed:
/// `(1.2345678901234567e-140*7.8886090522101180541e-31*…)`, which SQLite
/// computes exactly.
///
/// ```swift
/// let literals = try RealLiterals()
/// literals.literal(for: 0.1)     // 0.10000000000000000555
/// literals.literal(for: 3)       // 3.0
/// literals.literal(for: 5e-324)  // (4.9406564584124654418e-294*7.8886090522101180541e-31)
/// ```
///
/// Not thread-safe: use one instance from one thread at a time.
final class RealLiterals {
    private let connection: RawConnection
    /// `SELECT ?1`: a value read back as a REAL goes through SQLite's own text-to-double converter.
    private let statement: RawStatement
    private var reader: OpaquePointer { statement.handle }
    /// The inverse of the scale used for tiny values: 2^-100, read back exactly.
    private var downScale = ""
    /// The inverse of the scale used for huge values: 2^100.
    private var upScale = ""

    init() throws(SQLiveError) {
        do {
            connection = try RawConnection.inMemory()
            statement = try connection.prepare("SELECT ?1")
        } catch {
            throw .cannotOpen(path: ":memory:", reason: "cannot check REAL literals: \(error.message)")
        }
        downScale = decimal(for: 0x1p-100) ?? "7.8886090522101180541e-31"
        upScale = decimal(for: 0x1p100) ?? "1267650600228229401496703205376.0"
    }

    /// An SQL literal that SQLite reads back as exactly `value` (NaN, which
    /// SQLite stores as NULL, is `NULL`).
    func literal(for value: Double) -> String {
        if value.isNaN { return "NULL" }
        if value.isInfinite { return value < 0 ? "-1e999" : "1e999" }
        if value == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
        if let decimal = decimal(for: value) { return decimal }
        // Scale into the range SQLite reads exactly (every step is exact:
        // a multiplication by a power of two), then scale back in SQL.
        var scaled = value
        var steps = 0
        while scaled.magnitude < 1e-200 {
            scaled *= 0x1p100
            steps += 1
        }
        while scaled.magnitude > 1e200 {
            scaled *= 0x1p-100
            steps -= 1
        }
        guard steps != 0, let mantissa = decimal(for: scaled) else {
            return Self.format(value, digits: 20)
        }
        let factor = steps > 0 ? downScale : upScale
        return "(" + mantissa + String(repeating: "*" + factor, count: abs(steps)) + ")"
    }

    /// The shell's text for `value`, or another precision's, when SQLite reads it back exactly.
    private func decimal(for value: Double) -> String? {
        if let integer = Int64(exactly: value) { return "\(integer).0" }
        for digits in [20, 17, 16, 15, 18, 19, 21, 22, 23, 24, 25, 26] {
            let text = Self.format(value, digits: digits)
            if read(text).bitPattern == value.bitPattern { return text }
        }
        return nil
    }

    /// SQLite's `%!.*g`.
    static func format(_ value: Double, digits: Int) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let count = Int(sqlive_format_real_digits(value, Int32(digits), buffer.baseAddress!, 64))
            return String(
                decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: max(0, min(count, 63))),
                as: UTF8.self)
        }
    }

    /// What SQLite makes of the text as a REAL.
    func read(_ text: String) -> Double {
        sqlite3_reset(reader)
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        sqlite3_bind_text(reader, 1, text, -1, transient)
        defer { sqlite3_reset(reader) }
        guard sqlite3_step(reader) == SQLITE_ROW else { return .nan }
        return sqlite3_column_double(reader, 0)
    }
}
