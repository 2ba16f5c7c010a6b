import Foundation
import SQLiveEngine

/// Writes each statement's result as a JSON array of objects, one line per
/// row, like sqlite3's json mode.
///
/// Integers are exact (a 64-bit integer is never rounded through a
/// double), NULL is `null`, a BLOB is `{"$blob": "<base64>"}` as in the
/// JSON-RPC protocol, and a REAL that JSON cannot hold (NaN, infinity) is
/// `null`. An empty result is `[]`.
struct JSONRenderer: RowRenderer {
    private var keys: [[UInt8]] = []
    private var rowCount = 0

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        keys = columns.map { Array((Self.string($0) + ":").utf8) }
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        output.append(rowCount == 0 ? "[{" : ",\n{")
        for column in 0..<row.count {
            if column > 0 { output.append(byte: UInt8(ascii: ",")) }
            if column < keys.count {
                keys[column].withUnsafeBufferPointer { output.append($0) }
            } else {
                output.append("\"\":")
            }
            switch row.type(at: column) {
            case .null: output.append("null")
            case .integer: output.append(integer: row.integer(at: column))
            case .real:
                let value = row.real(at: column)
                output.append(value.isFinite ? "\(value)" : "null")
            case .text: row.withUTF8(at: column) { Self.appendString($0, to: &output) }
            case .blob:
                output.append("{\"$blob\":\"")
                output.append(row.withBlob(at: column) { Data($0) }.base64EncodedString())
                output.append("\"}")
            }
        }
        output.append(byte: UInt8(ascii: "}"))
        rowCount += 1
    }

    mutating func end(into output: inout OutputBuffer) {
        output.append(rowCount == 0 ? "[]\n" : "]\n")
    }

    /// Appends UTF-8 text as a JSON string literal.
    static func appendString(_ text: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        let start = output.count
        output.append(byte: 0x22)
        var asciiOnly = true
        for byte in text {
            switch byte {
            case 0x22: output.append("\\\"")
            case 0x5C: output.append("\\\\")
            case 0x0A: output.append("\\n")
            case 0x0D: output.append("\\r")
            case 0x09: output.append("\\t")
            case 0..<0x20:
                let digits: StaticString = "0123456789abcdef"
                output.append("\\u00")
                digits.withUTF8Buffer { digits in
                    output.append(byte: digits[Int(byte >> 4)])
                    output.append(byte: digits[Int(byte & 0xF)])
                }
            default:
                if byte >= 0x80 { asciiOnly = false }
                output.append(byte: byte)
            }
        }
        output.append(byte: 0x22)
        // Text SQLite holds is not always valid UTF-8: JSON must be.
        if !asciiOnly, String(validating: text, as: UTF8.self) == nil {
            output.truncate(to: start)
            appendString(Array(String(decoding: text, as: UTF8.self).utf8), to: &output)
        }
    }

    private static func appendString(_ text: [UInt8], to output: inout OutputBuffer) {
        text.withUnsafeBufferPointer { appendString($0, to: &output) }
    }

    /// A JSON string literal.
    static func string(_ text: String) -> String {
        var output = OutputBuffer()
        var text = text
        text.withUTF8 { appendString($0, to: &output) }
        return output.string
    }
}
