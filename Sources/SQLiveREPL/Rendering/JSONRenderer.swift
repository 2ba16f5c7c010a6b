import SQLiveEngine

/// Writes `json` mode as sqlite3 does: each statement's rows as an array
/// of objects, one row per line, and nothing for a statement that returns
/// no row.
///
/// Integers as they are, a REAL as `%!.20g` (`1e999` and `-1e999` for the
/// infinities), NULL as `null`, text and a BLOB's bytes as a JSON string
/// (controls escaped, every other byte as it is, as sqlite3 writes them).
struct JSONRenderer: RowRenderer {
    private var keys: [[UInt8]] = []
    private var rowCount = 0

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        keys = columns.map { name in
            var key = OutputBuffer()
            SQLiteText.appendJSON(name, to: &key)
            key.append(byte: UInt8(ascii: ":"))
            return key.bytes
        }
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        output.append(rowCount == 0 ? "[{" : ",\n{")
        for column in 0..<row.count {
            if column > 0 { output.append(byte: UInt8(ascii: ",")) }
            if column < keys.count { output.append(keys[column]) } else { output.append("\"\":") }
            switch row.type(at: column) {
            case .null: output.append("null")
            case .integer: output.append(integer: row.integer(at: column))
            case .real:
                let value = row.real(at: column)
                if value.isInfinite {
                    output.append(value < 0 ? "-1e999" : "1e999")
                } else {
                    SQLiteText.withReal20(value) { output.append($0) }
                }
            case .text: row.withUTF8(at: column) { SQLiteText.appendJSON(SQLiteText.untilNUL($0), to: &output) }
            case .blob:
                row.withBlob(at: column) { SQLiteText.appendJSON($0.assumingMemoryBound(to: UInt8.self), to: &output) }
            }
        }
        output.append(byte: UInt8(ascii: "}"))
        rowCount += 1
    }

    mutating func end(into output: inout OutputBuffer) {
        if rowCount > 0 { output.append("]\n") }
    }
}
