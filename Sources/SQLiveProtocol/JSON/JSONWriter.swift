/// A writer of compact JSON text, byte for byte as Foundation writes it.
///
/// The output is what `JSONEncoder` writes with the output formatting
/// `[.sortedKeys, .withoutEscapingSlashes]` and the non-conforming float
/// strategy `.convertToString(positiveInfinity: "Infinity",
/// negativeInfinity: "-Infinity", nan: "NaN")`: no whitespace; object keys
/// sorted by their UTF-8 bytes; slashes and non-ASCII characters written
/// as they are; `"`, `\`, and control characters escaped (`\n`, `\u001f`);
/// integral doubles written without a fraction (`1`, `-0`); infinities and
/// NaN written as the strings `"Infinity"`, `"-Infinity"`, `"NaN"`.
///
/// Write a whole ``JSONValue`` with ``write(_:)``, or write pieces: the
/// writer puts commas between the elements of arrays and the members of
/// objects. Pieces are written in the order they come; sort keys yourself
/// if the output must not depend on it.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.key("id")
/// writer.write(integer: 1)
/// writer.key("result")
/// writer.write(["ok": true])
/// writer.endObject()
/// String(decoding: writer.bytes, as: UTF8.self)  // {"id":1,"result":{"ok":true}}
/// ```
public struct JSONWriter: Sendable {
    /// The JSON text written so far, in UTF-8.
    public var bytes: [UInt8]

    /// For each open array or object, whether it has an element already.
    private var hasElement = BitStack()

    /// Whether a key was just written, so that the value needs no comma.
    private var afterKey = false

    /// Creates a writer whose buffer can hold `capacity` bytes before growing.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: Values

    /// Writes a whole JSON value, with object keys sorted.
    ///
    /// ```swift
    /// var writer = JSONWriter()
    /// writer.write(["b": 1, "a": [true, nil]])
    /// // {"a":[true,null],"b":1}
    /// ```
    public mutating func write(_ value: JSONValue) {
        separate()
        writeValue(value)
    }

    /// Writes `null`.
    public mutating func writeNull() {
        separate()
        append("null")
    }

    /// Writes `true` or `false`.
    public mutating func write(bool: Bool) {
        separate()
        append(bool ? "true" : "false")
    }

    /// Writes an integer in decimal.
    public mutating func write(integer: Int64) {
        separate()
        appendInteger(integer)
    }

    /// Writes a number, as Foundation's `JSONEncoder` writes a `Double`.
    ///
    /// ```swift
    /// writer.write(double: 1.0)       // 1
    /// writer.write(double: 0.1)       // 0.1
    /// writer.write(double: 1e300)     // 1e+300
    /// writer.write(double: .infinity) // "Infinity"
    /// ```
    public mutating func write(double: Double) {
        separate()
        appendDouble(double)
    }

    /// Writes a string, quoted and escaped.
    public mutating func write(string: String) {
        separate()
        appendString(string)
    }

    // MARK: Containers

    /// Starts an object: write keys and values, then call ``endObject()``.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        hasElement.push()
    }

    /// Writes the key of the next member of the current object.
    public mutating func key(_ key: String) {
        separate()
        appendString(key)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Ends the current object.
    public mutating func endObject() {
        hasElement.pop()
        afterKey = false
        bytes.append(UInt8(ascii: "}"))
    }

    /// Starts an array: write its elements, then call ``endArray()``.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        hasElement.push()
    }

    /// Ends the current array.
    public mutating func endArray() {
        hasElement.pop()
        afterKey = false
        bytes.append(UInt8(ascii: "]"))
    }

    // MARK: Implementation

    /// Writes the comma that separates a value from the previous one, if any.
    @inline(__always)
    mutating func separate() {
        if afterKey {
            afterKey = false
        } else if hasElement.top {
            bytes.append(UInt8(ascii: ","))
        } else {
            hasElement.top = true
        }
    }

    mutating func writeValue(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let bool): append(bool ? "true" : "false")
        case .integer(let integer): appendInteger(integer)
        case .double(let double): appendDouble(double)
        case .string(let string): appendString(string)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
                writeValue(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            if members.count == 1 {
                let (key, value) = members.first!
                appendString(key)
                bytes.append(UInt8(ascii: ":"))
                writeValue(value)
            } else if members.count <= 32 {
                // Insertion sort of the indices, without allocation: objects are small.
                withUnsafeTemporaryAllocation(of: [String: JSONValue].Index.self, capacity: members.count) { order in
                    var count = 0
                    for index in members.indices {
                        (order.baseAddress! + count).initialize(to: index)
                        let key = members[index].key
                        var j = count
                        while j > 0 && utf8Precedes(key, members[order[j - 1]].key) {
                            order.swapAt(j, j - 1)
                            j -= 1
                        }
                        count += 1
                    }
                    for i in 0..<count {
                        if i > 0 { bytes.append(UInt8(ascii: ",")) }
                        let (key, value) = members[order[i]]
                        appendString(key)
                        bytes.append(UInt8(ascii: ":"))
                        writeValue(value)
                    }
                    _ = order.baseAddress!.deinitialize(count: count)
                }
            } else {
                var first = true
                for (key, value) in members.sorted(by: { utf8Precedes($0.key, $1.key) }) {
                    if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
                    appendString(key)
                    bytes.append(UInt8(ascii: ":"))
                    writeValue(value)
                }
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    @inline(__always)
    private mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private mutating func appendInteger(_ integer: Int64) {
        if integer < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(integer.magnitude)
    }

    private mutating func appendDigits(_ magnitude: UInt64) {
        if magnitude < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(magnitude))
            return
        }
        // 20 digits hold UInt64.max.
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { digits in
            var remaining = magnitude
            var start = 24
            while remaining != 0 {
                let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit)
                remaining = quotient
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: digits[start...]))
        }
    }

    private mutating func appendDouble(_ double: Double) {
        guard double.isFinite else {
            if double.isNaN {
                append("\"NaN\"")
            } else {
                append(double < 0 ? "\"-Infinity\"" : "\"Infinity\"")
            }
            return
        }
        // Swift's description writes integral doubles below 2^53 as
        // "123.0", and Foundation drops the ".0": write the digits directly.
        if double.magnitude < 9_007_199_254_740_992, double == double.rounded(.towardZero) {
            if double.sign == .minus { bytes.append(UInt8(ascii: "-")) }
            appendDigits(UInt64(double.magnitude))
            return
        }
        // Otherwise the shortest form that reads back exactly, as Foundation:
        // Swift's description without a trailing ".0" ("1e+300", "0.1").
        var description = double.description
        description.withUTF8 { utf8 in
            var count = utf8.count
            if count > 2 && utf8[count - 2] == UInt8(ascii: ".") && utf8[count - 1] == UInt8(ascii: "0") {
                count -= 2
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<count]))
        }
    }

    mutating func appendString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in appendEscaped(utf8) }
    }

    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for i in utf8.indices {
            let byte = utf8[i]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") { continue }
            if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            runStart = i + 1
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            default:
                let hex: StaticString = "0123456789abcdef"
                append("\\u00")
                bytes.append(hex.utf8Start[Int(byte >> 4)])
                bytes.append(hex.utf8Start[Int(byte & 0xF)])
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// Whether a string's UTF-8 bytes sort before another's.
///
/// This is the order of Foundation's `.sortedKeys`: "B" < "_" < "a" < "é".
@inline(__always)
func utf8Precedes(_ a: String, _ b: String) -> Bool {
    utf8Compare(a, b) < 0
}

/// Compares the UTF-8 bytes of two strings: negative, zero or positive.
func utf8Compare(_ a: String, _ b: String) -> Int {
    let result = a.utf8.withContiguousStorageIfAvailable { a in
        b.utf8.withContiguousStorageIfAvailable { b in
            let count = min(a.count, b.count)
            for i in 0..<count where a[i] != b[i] {
                return Int(a[i]) - Int(b[i])
            }
            return a.count - b.count
        }
    }
    if let result, let result { return result }
    var left = a.utf8.makeIterator()
    var right = b.utf8.makeIterator()
    while true {
        switch (left.next(), right.next()) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let x?, let y?): if x != y { return Int(x) - Int(y) }
        }
    }
}

/// A stack of Booleans, without allocation for the first 64 levels.
struct BitStack: Sendable {
    /// The bits of the levels from `64 * overflow.count`, the top at `depth % 64`.
    private var bits: UInt64 = 0
    /// Full words of bits of outer levels.
    private var overflow: [UInt64] = []
    private var depth = 0

    /// The top Boolean.
    var top: Bool {
        @inline(__always) get { bits & (1 << UInt64(depth & 63)) != 0 }
        @inline(__always) set {
            if newValue {
                bits |= 1 << UInt64(depth & 63)
            } else {
                bits &= ~(1 << UInt64(depth & 63))
            }
        }
    }

    /// Pushes false.
    mutating func push() {
        depth += 1
        if depth & 63 == 0 {
            overflow.append(bits)
            bits = 0
        }
        top = false
    }

    /// Pops the top Boolean. Popping the bottom level does nothing.
    mutating func pop() {
        guard depth > 0 else { return }
        if depth & 63 == 0 { bits = overflow.removeLast() }
        depth -= 1
    }
}
