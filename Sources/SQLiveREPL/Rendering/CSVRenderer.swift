import SQLiveEngine

/// Writes RFC 4180 CSV: fields with a comma, a quote, a CR or a LF are
/// quoted, quotes doubled, lines end with CRLF. NULL is an empty field,
/// empty text `""`.
struct CSVRenderer: RowRenderer {
    let settings: RenderSettings

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        guard settings.headers else { return }
        for (index, column) in columns.enumerated() {
            if index > 0 { output.append(byte: UInt8(ascii: ",")) }
            var column = column
            column.withUTF8 { Self.appendField($0, to: &output) }
        }
        output.append("\r\n")
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        for column in 0..<row.count {
            if column > 0 { output.append(byte: UInt8(ascii: ",")) }
            switch row.type(at: column) {
            case .null: break
            case .integer: output.append(integer: row.integer(at: column))
            case .real: output.append(real: row.real(at: column))
            case .text:
                row.withUTF8(at: column) { text in
                    // Quoted when empty, as in sqlite3: an empty text is not NULL.
                    if text.isEmpty { output.append("\"\"") } else { Self.appendField(text, to: &output) }
                }
            case .blob: output.appendBlobLiteral(row, at: column)
            }
        }
        output.append("\r\n")
    }

    mutating func end(into output: inout OutputBuffer) {}

    /// Appends a field, quoted when it holds a comma, a quote or a line break.
    private static func appendField(_ field: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        guard field.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else {
            output.append(field)
            return
        }
        output.append(byte: 0x22)
        for byte in field {
            if byte == 0x22 { output.append(byte: 0x22) }
            output.append(byte: byte)
        }
        output.append(byte: 0x22)
    }
}
