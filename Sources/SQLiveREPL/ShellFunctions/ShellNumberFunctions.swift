import GRDBSQLite

/// The sqlite3 shell's number functions: the `ieee754` family (a REAL as
/// mantissa and power of two, and back) and the `decimal` family (exact
/// decimal arithmetic on text, `ShellDecimal`), with the aggregate and
/// window function `decimal_sum` and the collation `decimal`.
///
/// ```sql
/// SELECT ieee754(47.49);                -- ieee754(6683623321994527,-47)
/// SELECT decimal_mul('0.1', '0.2');     -- 0.02
/// SELECT decimal_sum(x) FROM t;         -- exact, however many rows
/// ```
enum ShellNumberFunctions {
    typealias F = ShellFunctions
    /// This type, named so in the C entry points (which cannot capture `Self`).
    typealias N = ShellNumberFunctions

    static func register(on connection: OpaquePointer) {
        let ieee = F.utf8 | F.innocuous
        F.scalar(connection, "ieee754", 1, ieee) { context, count, values in
            let (mantissa, exponent) = N.decompose(F.Arguments(values, count))
            F.resultText(context, "ieee754(\(mantissa),\(exponent))")
        }
        F.scalar(connection, "ieee754", 2, ieee) { context, count, values in
            let arguments = F.Arguments(values, count)
            let mantissa = sqlite3_value_int64(arguments[0])
            guard let value = N.compose(mantissa: mantissa, exponent: sqlite3_value_int64(arguments[1])) else { return }
            sqlite3_result_double(context, value)
        }
        F.scalar(connection, "ieee754_mantissa", 1, ieee) { context, count, values in
            sqlite3_result_int64(context, N.decompose(F.Arguments(values, count)).mantissa)
        }
        F.scalar(connection, "ieee754_exponent", 1, ieee) { context, count, values in
            sqlite3_result_int(context, Int32(truncatingIfNeeded: N.decompose(F.Arguments(values, count)).exponent))
        }
        F.scalar(connection, "ieee754_to_blob", 1, ieee) { context, count, values in
            let arguments = F.Arguments(values, count)
            guard arguments.type(0) == SQLITE_FLOAT || arguments.type(0) == SQLITE_INTEGER else { return }
            let bits = sqlite3_value_double(arguments[0]).bitPattern
            F.resultBlob(context, (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * $0)) })
        }
        F.scalar(connection, "ieee754_from_blob", 1, ieee) { context, count, values in
            let arguments = F.Arguments(values, count)
            guard let value = N.bigEndianDouble(arguments) else { return }
            sqlite3_result_double(context, value)
        }

        let decimal = F.utf8 | F.innocuous | F.deterministic
        F.scalar(connection, "decimal", 1, decimal) { context, count, values in
            N.result(context, N.number(F.Arguments(values, count), 0))
        }
        F.scalar(connection, "decimal_cmp", 2, decimal) { context, count, values in
            let arguments = F.Arguments(values, count)
            let a = N.number(arguments, 0)
            guard !a.isNull else { return }
            let b = N.number(arguments, 1)
            guard !b.isNull else { return }
            sqlite3_result_int(context, Int32(a.compare(b).signum()))
        }
        F.scalar(connection, "decimal_add", 2, decimal) { context, count, values in
            let arguments = F.Arguments(values, count)
            var a = N.number(arguments, 0)
            a.add(N.number(arguments, 1))
            N.result(context, a)
        }
        F.scalar(connection, "decimal_sub", 2, decimal) { context, count, values in
            let arguments = F.Arguments(values, count)
            var a = N.number(arguments, 0)
            var b = N.number(arguments, 1)
            b.negative.toggle()
            a.add(b)
            N.result(context, a)
        }
        F.scalar(connection, "decimal_mul", 2, decimal) { context, count, values in
            let arguments = F.Arguments(values, count)
            guard let product = N.number(arguments, 0).times(N.number(arguments, 1)) else { return }
            N.result(context, product)
        }
        sqlite3_create_window_function(
            connection, "decimal_sum", 1, decimal, nil, sumStep, sumFinal, sumValue, sumInverse, nil)
        sqlite3_create_collation_v2(connection, "decimal", SQLITE_UTF8, nil, collation, nil)
    }

    // MARK: - decimal_sum and the collation

    typealias Final = @convention(c) (OpaquePointer?) -> Void
    typealias Compare =
        @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32

    private static let sumStep: F.Scalar = { context, count, values in
        let arguments = F.Arguments(values, count)
        guard let sum = DecimalSum.state(context, create: true) else { return }
        guard arguments.type(0) != SQLITE_NULL else { return }
        sum.value.add(N.number(arguments, 0))
    }

    private static let sumInverse: F.Scalar = { context, count, values in
        let arguments = F.Arguments(values, count)
        guard let sum = DecimalSum.state(context, create: true) else { return }
        guard arguments.type(0) != SQLITE_NULL else { return }
        var value = N.number(arguments, 0)
        value.negative.toggle()
        sum.value.add(value)
    }

    private static let sumValue: Final = { context in
        guard let sum = DecimalSum.state(context, create: false) else { return }
        N.result(context, sum.value)
    }

    private static let sumFinal: Final = { context in
        guard let sum = DecimalSum.state(context, create: false) else { return }
        N.result(context, sum.value)
        DecimalSum.release(context)
    }

    /// The collation `decimal`: text compared as the numbers it reads as.
    private static let collation: Compare = { _, count1, key1, count2, key2 in
        let a = ShellDecimal(text: UnsafeRawBufferPointer(start: key1, count: Int(max(0, count1))))
        let b = ShellDecimal(text: UnsafeRawBufferPointer(start: key2, count: Int(max(0, count2))))
        return Int32(a.compare(b).signum())
    }

    // MARK: - ieee754

    /// A blob of 8 bytes read as a big-endian double.
    private static func bigEndianDouble(_ arguments: F.Arguments) -> Double? {
        guard arguments.type(0) == SQLITE_BLOB, sqlite3_value_bytes(arguments[0]) == 8 else { return nil }
        let bits = arguments.blob(0).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Double(bitPattern: bits)
    }

    /// The mantissa and the power of two of the argument, a REAL or a
    /// blob of 8 bytes, the mantissa odd (or zero) as the shell reduces it.
    static func decompose(_ arguments: F.Arguments) -> (mantissa: Int64, exponent: Int) {
        decompose(bigEndianDouble(arguments) ?? sqlite3_value_double(arguments[0]))
    }

    /// As the shell's extension computes it, on the bits: a negative zero
    /// and NaNs give what its signed arithmetic gives.
    static func decompose(_ value: Double) -> (mantissa: Int64, exponent: Int) {
        var magnitude = value
        let negative = value < 0
        if negative { magnitude = -magnitude }
        let bits = Int64(bitPattern: magnitude.bitPattern)
        guard bits != 0 else { return (0, -1075) }
        var exponent = Int(bits >> 52)
        var mantissa = bits & ((1 << 52) - 1)
        if exponent == 0 { mantissa <<= 1 } else { mantissa |= 1 << 52 }
        while exponent < 1075 && mantissa > 0 && mantissa & 1 == 0 {
            mantissa >>= 1
            exponent += 1
        }
        return (negative ? -mantissa : mantissa, exponent - 1075)
    }

    /// `mantissa` × 2^`exponent` as a double (`ieee754(M, E)`), rounded
    /// down as the extension shifts; `nil` (NULL) for the one mantissa
    /// whose magnitude does not fit.
    static func compose(mantissa: Int64, exponent: Int64) -> Double? {
        var m = mantissa
        var e = min(max(exponent, -10000), 10000)
        var negative = false
        if m < 0 {
            negative = true
            m = 0 &- m
            if m < 0 { return nil }
        } else if m == 0 && e > -1000 && e < 1000 {
            return 0
        }
        while (m >> 32) & 0xffe0_0000 != 0 {
            m >>= 1
            e += 1
        }
        while m != 0 && (m >> 32) & 0xfff0_0000 == 0 {
            m <<= 1
            e -= 1
        }
        e += 1075
        if e <= 0 {
            m = 1 - e >= 64 ? 0 : m >> (1 - e)
            e = 0
        } else if e > 0x7ff {
            e = 0x7ff
        }
        var bits = UInt64(bitPattern: m & ((1 << 52) - 1)) | UInt64(bitPattern: e << 52)
        if negative { bits |= 1 << 63 }
        return Double(bitPattern: bits)
    }

    // MARK: - decimal

    /// An argument as a decimal: NULL stays NULL; anything else is read
    /// from its text (a REAL's as SQLite writes it, 15 digits).
    static func number(_ arguments: F.Arguments, _ index: Int) -> ShellDecimal {
        guard arguments.type(index) != SQLITE_NULL, let text = arguments.text(index) else { return .null }
        return ShellDecimal(text: text)
    }

    static func result(_ context: OpaquePointer?, _ number: ShellDecimal) {
        guard let text = number.text else {
            sqlite3_result_null(context)
            return
        }
        F.resultText(context, text)
    }
}

/// `decimal_sum`'s running total, kept in SQLite's aggregate context (a
/// pointer to it, retained until the final call, which SQLite also makes
/// when a statement stops early).
final class DecimalSum {
    var value = ShellDecimal.zero

    /// The total of this aggregate, made at the first row with `create`;
    /// `nil` when no row came (the sum of nothing is NULL).
    static func state(_ context: OpaquePointer?, create: Bool) -> DecimalSum? {
        let size = Int32(MemoryLayout<UnsafeMutableRawPointer?>.size)
        guard let slot = sqlite3_aggregate_context(context, create ? size : 0) else { return nil }
        let pointer = slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        if let existing = pointer.pointee {
            return Unmanaged<DecimalSum>.fromOpaque(existing).takeUnretainedValue()
        }
        guard create else { return nil }
        let sum = DecimalSum()
        pointer.pointee = Unmanaged.passRetained(sum).toOpaque()
        return sum
    }

    static func release(_ context: OpaquePointer?) {
        guard let slot = sqlite3_aggregate_context(context, 0) else { return }
        let pointer = slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        if let existing = pointer.pointee {
            Unmanaged<DecimalSum>.fromOpaque(existing).release()
            pointer.pointee = nil
        }
    }
}
