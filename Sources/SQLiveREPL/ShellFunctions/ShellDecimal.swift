/// A number of the sqlite3 shell's `decimal` functions (SQLite 3.40.1's
/// decimal extension): digits in base ten, as many as it takes, with the
/// rules of that version — its parser, its text, its comparison and its
/// arithmetic, quirks included, so that every result is the shell's.
///
/// ```swift
/// let product = ShellDecimal(text: Array("0.5".utf8)).times(ShellDecimal(text: Array("0.5".utf8)))
/// String(decoding: product!.text!, as: UTF8.self)   // "0.25"
/// ```
///
/// Its fields are the extension's: `digits` (most significant first, each
/// 0 to 9), `fraction` (how many of them follow the decimal point),
/// `negative`, and `isNull` for SQL's NULL.
struct ShellDecimal: Equatable, Sendable {
    var negative = false
    var isNull = false
    var digits: [Int8] = []
    var fraction = 0

    static let null = ShellDecimal(isNull: true)

    /// Zero as `decimal_sum` starts: one digit, 0.
    static let zero = ShellDecimal(digits: [0])

    init(negative: Bool = false, isNull: Bool = false, digits: [Int8] = [], fraction: Int = 0) {
        self.negative = negative
        self.isNull = isNull
        self.digits = digits
        self.fraction = fraction
    }

    /// Reads text as the extension does: spaces, a sign and zeros first
    /// are skipped; then every digit counts, a `.` marks where the fraction
    /// starts (the last one wins), `e` or `E` ends the number with an
    /// exponent (of the digits that follow it, anything else skipped), and
    /// every other byte is ignored.
    init(text: some Collection<UInt8>) {
        let bytes = Array(text)
        let count = bytes.count
        func byte(_ index: Int) -> UInt8 { index < count ? bytes[index] : 0 }
        var index = 0
        while Self.isSpace(byte(index)) { index += 1 }
        if byte(index) == UInt8(ascii: "-") {
            negative = true
            index += 1
        } else if byte(index) == UInt8(ascii: "+") {
            index += 1
        }
        while index < count && bytes[index] == UInt8(ascii: "0") { index += 1 }
        var exponent = 0
        // Where the fraction starts, plus one (0: no point seen).
        var point = 0
        scan: while index < count {
            let character = bytes[index]
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits.append(Int8(character - UInt8(ascii: "0")))
            case UInt8(ascii: "."):
                point = digits.count + 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                var next = index + 1
                var negativeExponent = false
                if next >= count { break scan }
                if bytes[next] == UInt8(ascii: "-") {
                    negativeExponent = true
                    next += 1
                } else if bytes[next] == UInt8(ascii: "+") {
                    next += 1
                }
                while next < count && exponent < 1_000_000 {
                    let digit = bytes[next]
                    if digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") {
                        exponent = exponent * 10 + Int(digit - UInt8(ascii: "0"))
                    }
                    next += 1
                }
                if negativeExponent { exponent = -exponent }
                break scan
            default:
                break
            }
            index += 1
        }
        fraction = point == 0 ? 0 : digits.count - (point - 1)
        if exponent > 0 {
            if fraction > 0 {
                if exponent <= fraction {
                    fraction -= exponent
                    exponent = 0
                } else {
                    exponent -= fraction
                    fraction = 0
                }
            }
            if exponent > 0 { digits += repeatElement(0, count: exponent) }
        } else if exponent < 0 {
            exponent = -exponent
            let extra = digits.count - fraction - 1
            if extra != 0 {
                if extra >= exponent {
                    fraction += exponent
                    exponent = 0
                } else {
                    exponent -= extra
                    fraction = digits.count - 1
                }
            }
            if exponent > 0 {
                digits.insert(contentsOf: repeatElement(0, count: exponent), at: 0)
                fraction += exponent
            }
        }
    }

    /// C's `isspace` in the C locale.
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }

    /// The text the extension makes of the number (`nil` for NULL): zeros
    /// before the integer part dropped but one, a `0` before a point that
    /// would start it, every digit of the fraction kept, and no `-` before
    /// a zero written with a single digit.
    var text: [UInt8]? {
        guard !isNull else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(digits.count + 4)
        let negative = self.negative && !(digits.isEmpty || (digits.count == 1 && digits[0] == 0))
        if negative { output.append(UInt8(ascii: "-")) }
        var integers = digits.count - fraction
        if integers <= 0 { output.append(UInt8(ascii: "0")) }
        var index = 0
        while integers > 1 && digit(index) == 0 {
            index += 1
            integers -= 1
        }
        while integers > 0 {
            output.append(UInt8(ascii: "0") + UInt8(digit(index)))
            index += 1
            integers -= 1
        }
        if fraction != 0 {
            output.append(UInt8(ascii: "."))
            repeat {
                output.append(UInt8(ascii: "0") + UInt8(digit(index)))
                index += 1
            } while index < digits.count
        }
        return output
    }

    /// A digit, 0 past the end (where the extension reads memory it owns
    /// but never wrote).
    private func digit(_ index: Int) -> Int8 {
        index >= 0 && index < digits.count ? digits[index] : 0
    }

    /// Negative, zero or positive as `self` is below, equal to or above
    /// `other`, as the extension compares (neither may be NULL): by sign,
    /// then by the number of digits before the point, then digit by digit,
    /// then by the number of digits.
    func compare(_ other: ShellDecimal) -> Int {
        if negative != other.negative { return negative ? -1 : 1 }
        let (a, b) = negative ? (other, self) : (self, other)
        let aIntegers = a.digits.count - a.fraction
        let bIntegers = b.digits.count - b.fraction
        if aIntegers != bIntegers { return aIntegers - bIntegers }
        for index in 0..<min(a.digits.count, b.digits.count) where a.digits[index] != b.digits[index] {
            return Int(a.digits[index]) - Int(b.digits[index])
        }
        return a.digits.count - b.digits.count
    }

    /// Pads the digits so that there are `count` of them, `fraction` after
    /// the point.
    private mutating func expand(to count: Int, fraction newFraction: Int) {
        let addedFraction = newFraction - fraction
        let addedIntegers = (count - digits.count) - addedFraction
        if addedIntegers > 0 { digits.insert(contentsOf: repeatElement(0, count: addedIntegers), at: 0) }
        if addedFraction > 0 {
            digits += repeatElement(0, count: addedFraction)
            fraction += addedFraction
        }
    }

    /// Adds `other` (`decimal_add`; `decimal_sub` adds the negation). NULL
    /// on either side makes NULL.
    mutating func add(_ other: ShellDecimal) {
        if isNull || other.isNull {
            isNull = true
            return
        }
        var other = other
        var integers = digits.count - fraction
        if integers != 0 && digits.first == 0 { integers -= 1 }
        integers = max(integers, other.digits.count - other.fraction)
        let newFraction = max(fraction, other.fraction)
        let count = integers + newFraction + 1
        expand(to: count, fraction: newFraction)
        other.expand(to: count, fraction: newFraction)
        if negative == other.negative {
            var carry: Int8 = 0
            for index in stride(from: count - 1, through: 0, by: -1) {
                let sum = digits[index] + other.digits[index] + carry
                carry = sum >= 10 ? 1 : 0
                digits[index] = sum >= 10 ? sum - 10 : sum
            }
        } else {
            let larger: [Int8]
            let smaller: [Int8]
            if digits.lexicographicallyPrecedes(other.digits) {
                (larger, smaller) = (other.digits, digits)
                negative.toggle()
            } else {
                (larger, smaller) = (digits, other.digits)
            }
            var borrow: Int8 = 0
            for index in stride(from: count - 1, through: 0, by: -1) {
                let difference = larger[index] - smaller[index] - borrow
                borrow = difference < 0 ? 1 : 0
                digits[index] = difference < 0 ? difference + 10 : difference
            }
        }
    }

    /// The product (`decimal_mul`): every digit kept, then zeros at the end
    /// of the fraction dropped while it stays as long as the shorter
    /// fraction of the two. `nil` (SQL NULL) when either is NULL.
    func times(_ other: ShellDecimal) -> ShellDecimal? {
        guard !isNull, !other.isNull else { return nil }
        let a = digits
        let b = other.digits
        var accumulator = [Int](repeating: 0, count: a.count + b.count + 2)
        let minimumFraction = min(fraction, other.fraction)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            let factor = Int(a[i])
            var carry = 0
            var k = i + b.count - 1 + 3
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                let x = accumulator[k] + factor * Int(b[j]) + carry
                accumulator[k] = x % 10
                carry = x / 10
                k -= 1
            }
            let x = accumulator[k] + carry
            accumulator[k] = x % 10
            accumulator[k - 1] += x / 10
        }
        var product = ShellDecimal(
            negative: negative != other.negative, digits: accumulator.map { Int8(truncatingIfNeeded: $0) },
            fraction: fraction + other.fraction)
        while product.fraction > minimumFraction && product.digits.last == 0 {
            product.fraction -= 1
            product.digits.removeLast()
        }
        return product
    }
}
