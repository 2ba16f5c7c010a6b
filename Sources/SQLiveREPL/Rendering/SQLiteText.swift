import CSQLiveSupport
import GRDBSQLite
import Glibc
import SQLiveEngine

/// Values as the sqlite3 3.40.1 shell writes them: the text SQLite gives
/// for a column (`sqlite3_column_text`), and the quoting of each mode.
enum SQLiteText {
    /// sqlite3 keeps separators and the NULL text in 20-byte buffers: at
    /// most 19 bytes (cut here at a character's boundary).
    static func limited(_ text: String) -> String {
        guard text.utf8.count > 19 else { return text }
        var result = ""
        for character in text {
            guard result.utf8.count + character.utf8.count <= 19 else { break }
            result.append(character)
        }
        return result
    }

    /// The table name of `.mode insert`: in double quotes when it is not a
    /// plain identifier or is a keyword, as sqlite3 writes it.
    static func quotedTableName(_ name: String) -> String {
        func plain(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x5F
        }
        let bytes = Array(name.utf8)
        let needsQuotes =
            bytes.isEmpty || (bytes[0] >= 0x30 && bytes[0] <= 0x39) || !bytes.allSatisfy(plain)
            || sqlite3_keyword_check(name, Int32(bytes.count)) != 0
        guard needsQuotes else { return name }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Calls `body` with a column's text as `sqlite3_column_text` gives it
    /// (a REAL as `%!.15g`, a BLOB's own bytes), or `nil` for NULL.
    static func withText<R>(
        _ row: some RowValues, at column: Int, _ body: (UnsafeBufferPointer<UInt8>?) throws -> R
    ) rethrows -> R {
        switch row.type(at: column) {
        case .null: return try body(nil)
        case .text: return try row.withUTF8(at: column) { try body(untilNUL($0)) }
        case .blob: return try row.withBlob(at: column) { try body(untilNUL($0.assumingMemoryBound(to: UInt8.self))) }
        case .real: return try SQLValue.withFormatted(real: row.real(at: column)) { try body($0) }
        case .integer: return try withDigits(of: row.integer(at: column), body)
        }
    }

    /// Calls `body` with an integer's decimal digits, formatted on the
    /// stack (this runs for every INTEGER cell: no allocation).
    @inline(__always)
    static func withDigits<R>(of value: Int64, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var index = 20
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                digits[index] = UInt8(ascii: "-")
            }
            return try body(UnsafeBufferPointer(rebasing: digits[index..<20]))
        }
    }

    /// The bytes before the first NUL: sqlite3 writes values as C strings.
    @inline(__always)
    static func untilNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) else { return bytes }
        return UnsafeBufferPointer(start: base, count: UnsafePointer(nul.assumingMemoryBound(to: UInt8.self)) - base)
    }

    /// Calls `body` with a REAL as SQLite's `%!.20g` writes it.
    static func withReal20<R>(_ value: Double, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            let count = buffer.withMemoryRebound(to: CChar.self) {
                Int(sqlive_format_real_digits(value, 20, $0.baseAddress!, 64))
            }
            return try body(UnsafeBufferPointer(rebasing: buffer[..<max(0, min(count, 63))]))
        }
    }

    /// Text as C and Tcl write a string literal (`.show`, `tcl` mode):
    /// quoted, `\\`, `\"`, `\t`, `\n`, `\r` escaped, other unprintable
    /// bytes (controls, and every byte of non-ASCII text) in octal.
    static func appendCString(_ text: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        output.append(byte: 0x22)
        for byte in text {
            switch byte {
            case 0: break
            case 0x5C: output.append("\\\\")
            case 0x22: output.append("\\\"")
            case 0x09: output.append("\\t")
            case 0x0A: output.append("\\n")
            case 0x0D: output.append("\\r")
            case 0x20..<0x7F: output.append(byte: byte)
            default:
                output.append(byte: 0x5C)
                output.append(byte: 0x30 + (byte >> 6))
                output.append(byte: 0x30 + ((byte >> 3) & 7))
                output.append(byte: 0x30 + (byte & 7))
            }
        }
        output.append(byte: 0x22)
    }

    static func cString(_ text: String) -> String {
        var output = OutputBuffer()
        var text = text
        text.withUTF8 { appendCString($0, to: &output) }
        return output.string
    }

    /// Text with `<`, `&`, `>`, `"` and `'` as HTML entities.
    static func appendHTML(_ text: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        var start = 0
        for (index, byte) in text.enumerated() {
            let entity: String
            switch byte {
            case 0x3C: entity = "&lt;"
            case 0x26: entity = "&amp;"
            case 0x3E: entity = "&gt;"
            case 0x22: entity = "&quot;"
            case 0x27: entity = "&#39;"
            default: continue
            }
            output.append(UnsafeBufferPointer(rebasing: text[start..<index]))
            output.append(entity)
            start = index + 1
        }
        output.append(UnsafeBufferPointer(rebasing: text[start...]))
    }

    /// A field of `csv`: in double quotes (doubled inside) when it is empty,
    /// holds the column separator, or holds a byte sqlite3 quotes (a
    /// control, a space, `"`, `'`, DEL, any byte of non-ASCII text).
    static func appendCSV(
        _ field: UnsafeBufferPointer<UInt8>, separator: [UInt8], to output: inout OutputBuffer
    ) {
        var quoted = field.isEmpty
        if !quoted {
            // One pass; a one-byte separator (`,`) is checked in it.
            let single: Int32 = separator.count == 1 ? Int32(separator[0]) : -1
            for byte in field
            where byte <= 0x20 || byte == 0x22 || byte == 0x27 || byte >= 0x7F || Int32(byte) == single {
                quoted = true
                break
            }
            if !quoted && separator.count != 1 { quoted = contains(field, separator) }
        }
        guard quoted else {
            output.append(field)
            return
        }
        appendEnclosed(field, in: 0x22, to: &output)
    }

    /// Text between two `quote` bytes, each `quote` in it doubled: a CSV
    /// field (`"`), an SQL literal (`'`).
    static func appendEnclosed(_ text: UnsafeBufferPointer<UInt8>, in quote: UInt8, to output: inout OutputBuffer) {
        output.append(byte: quote)
        var start = 0
        for (index, byte) in text.enumerated() where byte == quote {
            output.append(UnsafeBufferPointer(rebasing: text[start...index]))
            output.append(byte: quote)
            start = index + 1
        }
        output.append(UnsafeBufferPointer(rebasing: text[start...]))
        output.append(byte: quote)
    }

    /// Whether `text` holds `part` (always, for an empty `part`, as C's `strstr`).
    static func contains(_ text: UnsafeBufferPointer<UInt8>, _ part: [UInt8]) -> Bool {
        guard let first = part.first else { return true }
        guard part.count <= text.count else { return false }
        var index = 0
        while index + part.count <= text.count {
            if text[index] == first, (1..<part.count).allSatisfy({ text[index + $0] == part[$0] }) { return true }
            index += 1
        }
        return false
    }

    /// A JSON string as sqlite3 writes it: `\\`, `\"`, `\b`, `\f`, `\n`, `\r`,
    /// `\t`, other controls as `\u00XX`, every other byte as it is.
    static func appendJSON(_ text: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        output.append(byte: 0x22)
        var start = 0
        for (index, byte) in text.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            output.append(UnsafeBufferPointer(rebasing: text[start..<index]))
            switch byte {
            case 0x22: output.append("\\\"")
            case 0x5C: output.append("\\\\")
            case 0x08: output.append("\\b")
            case 0x0C: output.append("\\f")
            case 0x0A: output.append("\\n")
            case 0x0D: output.append("\\r")
            case 0x09: output.append("\\t")
            default:
                let digits: StaticString = "0123456789abcdef"
                output.append("\\u00")
                digits.withUTF8Buffer { digits in
                    output.append(byte: digits[Int(byte >> 4)])
                    output.append(byte: digits[Int(byte & 0xF)])
                }
            }
            start = index + 1
        }
        output.append(UnsafeBufferPointer(rebasing: text[start...]))
        output.append(byte: 0x22)
    }

    static func appendJSON(_ text: String, to output: inout OutputBuffer) {
        var text = text
        text.withUTF8 { appendJSON($0, to: &output) }
    }

    /// Text as an SQL literal: in single quotes, quotes doubled.
    static func appendQuoted(_ text: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        appendEnclosed(text, in: 0x27, to: &output)
    }

    static func appendQuoted(_ text: String, to output: inout OutputBuffer) {
        var text = text
        text.withUTF8 { appendQuoted($0, to: &output) }
    }
}
