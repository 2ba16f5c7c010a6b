#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A strict RFC 8259 JSON parser producing ``JSONValue`` trees.
///
/// The input is exactly one JSON value, with optional whitespace (space,
/// tab, line feed, carriage return) around it. The whole input must be valid
/// UTF-8, without a byte order mark. A number written without fraction nor
/// exponent that fits an `Int64` is an ``JSONValue/integer(_:)``; any other
/// number (`1.0`, `1e2`, `9223372036854775808`) is a ``JSONValue/double(_:)``,
/// correctly rounded, and a number too large for a `Double` (`1e400`) is an
/// error. Strings may contain every JSON escape; an escaped surrogate must be
/// half of a pair. Arrays and objects nest at most ``maximumDepth`` levels
/// deep. When an object repeats a key, the last member wins.
///
/// Every problem throws a ``JSONSyntaxError`` that says where it is.
///
/// ```swift
/// let request = try JSONReader.parse(#"{"id": 1, "method": "ping"}"#)
/// request["id"]        // .integer(1)
/// request["method"]    // .string("ping")
/// ```
public enum JSONReader {
    /// The deepest nesting of arrays and objects the reader accepts.
    public static let maximumDepth = 512

    /// Parses one JSON value from raw UTF-8 bytes.
    ///
    /// The bytes are read in place, never copied as a whole.
    ///
    /// ```swift
    /// let value = try bytes.withUnsafeBytes { try JSONReader.parse($0) }
    /// ```
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> JSONValue {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .unexpectedEnd(at: 0) }
        var parser = JSONParser(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        return try parser.parseDocument()
    }

    /// Parses one JSON value from an array of UTF-8 bytes.
    ///
    /// ```swift
    /// let value = try JSONReader.parse(Array(#"[1, 2.5, "three"]"#.utf8))
    /// ```
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(JSONSyntaxError) in try parse(raw) }
        }.get()
    }

    /// Parses one JSON value from contiguous UTF-8 bytes, such as `Data`.
    ///
    /// ```swift
    /// let value = try JSONReader.parse(data)
    /// ```
    public static func parse(_ bytes: some ContiguousBytes) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(JSONSyntaxError) in try parse(raw) }
        }.get()
    }

    /// Parses one JSON value from a string's UTF-8.
    ///
    /// ```swift
    /// let value = try JSONReader.parse(#"{"ok": true}"#)
    /// ```
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var text = text
        return try text.withUTF8 { utf8 in
            Result { () throws(JSONSyntaxError) in try parse(UnsafeRawBufferPointer(utf8)) }
        }.get()
    }
}

// MARK: - Parser

private let quote: UInt8 = 0x22
private let backslash: UInt8 = 0x5C

/// The recursive-descent parser behind ``JSONReader``: an index into a buffer.
private struct JSONParser {
    let bytes: UnsafePointer<UInt8>
    let end: Int
    var index = 0
    var depth = 0
    /// The bytes of the string being unescaped.
    var scratch: [UInt8] = []
    /// The elements and members of the arrays and objects being parsed
    /// (elements with empty keys), shared by all levels.
    /// Slots past `entryCount` hold empty keys and nulls, which need no
    /// release: the stack never shrinks.
    var entries: [(key: String, value: JSONValue)] = []
    var entryCount = 0

    init(start: UnsafePointer<UInt8>, count: Int) {
        self.bytes = start
        self.end = count
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        if end >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            throw .byteOrderMark
        }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < end { throw unexpected(at: index) }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < end {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Parses the value at the index, after whitespace.
    mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < end else { throw .unexpectedEnd(at: end) }
        switch bytes[index] {
        case quote:
            index += 1
            return .string(try parseString())
        case UInt8(ascii: "{"):
            return try parseObject()
        case UInt8(ascii: "["):
            return try parseArray()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return .null
        default:
            throw unexpected(at: index)
        }
    }

    mutating func parseLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let utf8 = literal.utf8Start
        for offset in 0..<literal.utf8CodeUnitCount {
            guard index < end else { throw .unexpectedEnd(at: end) }
            guard bytes[index] == utf8[offset] else { throw unexpected(at: index) }
            index += 1
        }
    }

    // MARK: Containers

    /// Moves past the bracket or brace that opens an array or an object, one
    /// level deeper.
    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > JSONReader.maximumDepth { throw .tooDeep(at: index) }
        index += 1
    }

    /// Pushes a member of the object, or an element of the array (with an
    /// empty key), being parsed.
    @inline(__always)
    mutating func push(key: String, value: JSONValue) {
        if entryCount < entries.count {
            entries[entryCount] = (key: key, value: value)
        } else {
            if entries.capacity == 0 { entries.reserveCapacity(16) }
            entries.append((key: key, value: value))
        }
        entryCount += 1
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        skipWhitespace()
        guard index < end else { throw .unexpectedEnd(at: end) }
        if bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array([])
        }
        let first = entryCount
        while true {
            let value = try parseValue()
            push(key: "", value: value)
            if try containerEnds(at: UInt8(ascii: "]")) { break }
        }
        let count = entryCount - first
        let elements = [JSONValue](unsafeUninitializedCapacity: count) { elements, initialized in
            entries.withUnsafeMutableBufferPointer { entries in
                let source = entries.baseAddress! + first
                for offset in 0..<count {
                    // Moved out, and replaced by a value without references.
                    (elements.baseAddress! + offset).initialize(to: (source + offset).move().value)
                    (source + offset).initialize(to: (key: "", value: .null))
                }
            }
            initialized = count
        }
        entryCount = first
        depth -= 1
        return .array(elements)
    }

    /// After a member or an element: a comma (then whitespace) means
    /// another follows, `closing` that the container ends.
    mutating func containerEnds(at closing: UInt8) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard index < end else { throw .unexpectedEnd(at: end) }
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: ",") {
            skipWhitespace()
            return false
        }
        guard byte == closing else { throw unexpected(at: index - 1) }
        return true
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        skipWhitespace()
        guard index < end else { throw .unexpectedEnd(at: end) }
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object([:])
        }
        let first = entryCount
        while true {
            guard index < end else { throw .unexpectedEnd(at: end) }
            guard bytes[index] == quote else { throw unexpected(at: index) }
            index += 1
            let key = try parseString()
            skipWhitespace()
            guard index < end else { throw .unexpectedEnd(at: end) }
            guard bytes[index] == UInt8(ascii: ":") else { throw unexpected(at: index) }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            push(key: key, value: value)
            if try containerEnds(at: UInt8(ascii: "}")) { break }
        }
        let count = entryCount - first
        var members = [String: JSONValue](minimumCapacity: count)
        entries.withUnsafeMutableBufferPointer { entries in
            let source = entries.baseAddress! + first
            for offset in 0..<count {
                // Moved out, and replaced by a value without references.
                let (key, value) = (source + offset).move()
                (source + offset).initialize(to: (key: "", value: .null))
                // Assignment: when a key repeats, the last member wins.
                members[key] = value
            }
        }
        entryCount = first
        depth -= 1
        return .object(members)
    }

    // MARK: Strings

    /// Parses a string whose opening quote is just before the index.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = index
        while true {
            index = scanPlainASCII(from: index)
            guard index < end else { throw .unexpectedEnd(at: end) }
            let byte = bytes[index]
            if byte == quote {
                let string = String(
                    decoding: UnsafeBufferPointer(start: bytes + start, count: index - start), as: UTF8.self)
                index += 1
                return string
            } else if byte == backslash {
                return try parseEscapedString(from: start)
            } else if byte < 0x20 {
                throw .controlCharacter(byte, at: index)
            } else {
                index += try validateMultibyte(at: index)
            }
        }
    }

    /// The index of the first byte from `start` that is a quote, a backslash,
    /// a control character or not ASCII, or `end`.
    @inline(__always)
    func scanPlainASCII(from start: Int) -> Int {
        var i = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i + 8 <= end {
            let word = UInt64(littleEndian: UnsafeRawPointer(bytes + i).loadUnaligned(as: UInt64.self))
            let quotes = word ^ (ones &* UInt64(quote))
            let backslashes = word ^ (ones &* UInt64(backslash))
            let special =
                (word & highs)
                | ((word &- ones &* 0x20) & ~word & highs)
                | ((quotes &- ones) & ~quotes & highs)
                | ((backslashes &- ones) & ~backslashes & highs)
            if special != 0 {
                // The lowest flagged byte is always a genuine one.
                return i + special.trailingZeroBitCount / 8
            }
            i += 8
        }
        while i < end {
            let byte = bytes[i]
            if byte == quote || byte == backslash || byte < 0x20 || byte >= 0x80 { return i }
            i += 1
        }
        return i
    }

    /// Parses the rest of a string that contains escapes, from its start.
    mutating func parseEscapedString(from start: Int) throws(JSONSyntaxError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: bytes + start, count: index - start))
        while true {
            let runStart = index
            index = scanPlainASCII(from: index)
            if index > runStart {
                scratch.append(contentsOf: UnsafeBufferPointer(start: bytes + runStart, count: index - runStart))
            }
            guard index < end else { throw .unexpectedEnd(at: end) }
            let byte = bytes[index]
            if byte == quote {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == backslash {
                try parseEscape()
            } else if byte < 0x20 {
                throw .controlCharacter(byte, at: index)
            } else {
                let length = try validateMultibyte(at: index)
                scratch.append(contentsOf: UnsafeBufferPointer(start: bytes + index, count: length))
                index += length
            }
        }
    }

    /// Parses the escape sequence at the index into the scratch buffer.
    mutating func parseEscape() throws(JSONSyntaxError) {
        let escapeStart = index
        guard index + 1 < end else { throw .unexpectedEnd(at: end) }
        let byte = bytes[index + 1]
        index += 2
        switch byte {
        case quote, backslash, UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4(escapeStart: escapeStart)
            var scalar = unit
            if unit >= 0xD800 && unit <= 0xDBFF {
                // A high surrogate must be followed by an escaped low surrogate.
                guard index + 1 < end, bytes[index] == backslash, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw .unpairedSurrogate(unit, at: escapeStart)
                }
                let lowStart = index
                index += 2
                let low = try parseHex4(escapeStart: lowStart)
                guard low >= 0xDC00 && low <= 0xDFFF else { throw .unpairedSurrogate(unit, at: escapeStart) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw .unpairedSurrogate(unit, at: escapeStart)
            }
            appendUTF8(scalar)
        default:
            throw .invalidEscape(at: escapeStart)
        }
    }

    /// Parses the four hexadecimal digits of a `\u` escape at the index.
    mutating func parseHex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
        var unit: UInt32 = 0
        for _ in 0..<4 {
            guard index < end else { throw .unexpectedEnd(at: end) }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: throw .invalidEscape(at: escapeStart)
            }
            unit = unit << 4 | UInt32(digit)
            index += 1
        }
        return unit
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// The length of the valid multibyte UTF-8 sequence at `i`, whose first
    /// byte is not ASCII, or 0.
    ///
    /// It follows the Unicode Standard's table of well-formed sequences: no
    /// overlong forms, no surrogates, nothing above U+10FFFF.
    func multibyteLength(at i: Int) -> Int {
        let lead = bytes[i]
        @inline(__always) func isContinuation(_ j: Int) -> Bool {
            j < end && bytes[j] & 0xC0 == 0x80
        }
        @inline(__always) func isIn(_ j: Int, _ range: ClosedRange<UInt8>) -> Bool {
            j < end && range.contains(bytes[j])
        }
        switch lead {
        case 0xC2...0xDF:
            return isContinuation(i + 1) ? 2 : 0
        case 0xE0...0xEF:
            let second: ClosedRange<UInt8> =
                switch lead {
                case 0xE0: 0xA0...0xBF
                case 0xED: 0x80...0x9F
                default: 0x80...0xBF
                }
            return isIn(i + 1, second) && isContinuation(i + 2) ? 3 : 0
        case 0xF0...0xF4:
            let second: ClosedRange<UInt8> =
                switch lead {
                case 0xF0: 0x90...0xBF
                case 0xF4: 0x80...0x8F
                default: 0x80...0xBF
                }
            return isIn(i + 1, second) && isContinuation(i + 2) && isContinuation(i + 3) ? 4 : 0
        default:
            return 0
        }
    }

    func validateMultibyte(at i: Int) throws(JSONSyntaxError) -> Int {
        let length = multibyteLength(at: i)
        if length == 0 { throw .invalidUTF8(at: i) }
        return length
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }

        // Significant digits, up to 19 of them (they always fit a UInt64).
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var truncated = false
        // The decimal exponent the digits past the 19th and the fraction add.
        var exponentAdjustment = 0

        @inline(__always) func isDigit(_ byte: UInt8) -> Bool {
            byte &- UInt8(ascii: "0") < 10
        }

        guard index < end else { throw .unexpectedEnd(at: end) }
        guard isDigit(bytes[index]) else { throw unexpected(at: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < end && isDigit(bytes[index]) { throw unexpected(at: index) }
        } else {
            while index < end && isDigit(bytes[index]) {
                let digit = UInt64(bytes[index] &- UInt8(ascii: "0"))
                if significantDigits < 19 {
                    mantissa = mantissa &* 10 &+ digit
                    significantDigits += 1
                } else {
                    truncated = true
                    exponentAdjustment += 1
                }
                index += 1
            }
        }

        var isInteger = true
        if index < end && bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < end else { throw .unexpectedEnd(at: end) }
            guard isDigit(bytes[index]) else { throw unexpected(at: index) }
            while index < end && isDigit(bytes[index]) {
                let digit = UInt64(bytes[index] &- UInt8(ascii: "0"))
                if significantDigits < 19 {
                    if mantissa != 0 || digit != 0 {
                        mantissa = mantissa &* 10 &+ digit
                        significantDigits += 1
                    }
                    exponentAdjustment -= 1
                } else {
                    truncated = true
                }
                index += 1
            }
        }

        var exponent = 0
        if index < end && (bytes[index] | 0x20) == UInt8(ascii: "e") {
            isInteger = false
            index += 1
            guard index < end else { throw .unexpectedEnd(at: end) }
            var negativeExponent = false
            if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                negativeExponent = bytes[index] == UInt8(ascii: "-")
                index += 1
                guard index < end else { throw .unexpectedEnd(at: end) }
            }
            guard isDigit(bytes[index]) else { throw unexpected(at: index) }
            while index < end && isDigit(bytes[index]) {
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(bytes[index] &- UInt8(ascii: "0")) }
                index += 1
            }
            if negativeExponent { exponent = -exponent }
        }

        if isInteger && !truncated {
            if negative {
                if mantissa <= UInt64(Int64.max) + 1 { return .integer(Int64(truncatingIfNeeded: 0 &- mantissa)) }
            } else if mantissa <= UInt64(Int64.max) {
                return .integer(Int64(mantissa))
            }
        }

        // Clinger's fast path: an exact mantissa times an exact power of ten,
        // one correctly rounded operation.
        let decimalExponent = exponent + exponentAdjustment
        if !truncated && mantissa <= 1 << 53 && decimalExponent >= -22 && decimalExponent <= 22 {
            var double = Double(mantissa)
            if decimalExponent < 0 {
                double /= powersOfTen[-decimalExponent]
            } else {
                double *= powersOfTen[decimalExponent]
            }
            return .double(negative ? -double : double)
        }
        let token = String(decoding: UnsafeBufferPointer(start: bytes + start, count: index - start), as: UTF8.self)
        guard let double = Double(token), double.isFinite else { throw .numberOutOfRange(at: start) }
        return .double(double)
    }

    // MARK: Errors

    /// The error for an unexpected byte: a character, or invalid UTF-8.
    func unexpected(at i: Int) -> JSONSyntaxError {
        let byte = bytes[i]
        if byte >= 0x80 {
            let length = multibyteLength(at: i)
            if length == 0 { return .invalidUTF8(at: i) }
            let character = String(decoding: UnsafeBufferPointer(start: bytes + i, count: length), as: UTF8.self)
            return .unexpectedCharacter("'\(character)'", at: i)
        }
        if byte < 0x20 || byte == 0x7F {
            return .unexpectedCharacter("U+\(JSONSyntaxError.hex4(UInt32(byte), uppercase: true))", at: i)
        }
        return .unexpectedCharacter("'\(Character(Unicode.Scalar(byte)))'", at: i)
    }
}

/// The powers of ten that a `Double` holds exactly.
private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]
