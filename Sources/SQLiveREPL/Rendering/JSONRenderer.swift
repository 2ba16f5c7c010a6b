import SQLiveEngine

/// Writes each statement's result as a JSON array of objects, one line per
/// row, like sqlite3's json mode.
///
/// Integers are exact (a 64-bit integer is never rounded through a
/// double), NULL is `null`, a BLOB is `{"$blob": "<base64>"}` as in the
/// JSON-RPC protocol, and a REAL that JSON cannot hold (NaN, infinity) is
/// `null`. An empty result is `[]`.
struct JSONRenderer: RowRenderer {
    private var keys: [String] = []
    private var rowCount = 0

    mutating func begin(columns: [String], into output: inout String) {
        keys = columns.map { Self.string($0) + ":" }
        rowCount = 0
    }

    mutating func row(_ values: [SQLValue], into output: inout String) {
        output += rowCount == 0 ? "[{" : ",\n{"
        for (index, value) in values.enumerated() {
            if index > 0 { output += "," }
            output += index < keys.count ? keys[index] : "\"\":"
            Self.append(value, to: &output)
        }
        output += "}"
        rowCount += 1
    }

    mutating func end(into output: inout String) {
        output += rowCount == 0 ? "[]\n" : "]\n"
    }

    static func append(_ value: SQLValue, to output: inout String) {
        switch value {
        case .null: output += "null"
        case .integer(let value): output += String(value)
        case .real(let value): output += value.isFinite ? "\(value)" : "null"
        case .text(let text): output += string(text)
        case .blob(let data): output += "{\"$blob\":\"" + data.base64EncodedString() + "\"}"
        }
    }

    /// A JSON string literal.
    static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
