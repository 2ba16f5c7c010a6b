import SQLiveEngine

/// Writes RFC 4180 CSV: fields with a comma, a quote, a CR or a LF are
/// quoted, quotes doubled, lines end with CRLF. NULL is an empty field.
struct CSVRenderer: RowRenderer {
    let settings: RenderSettings

    mutating func begin(columns: [String], into output: inout String) {
        guard settings.headers else { return }
        line(columns.map(Self.quoted), into: &output)
    }

    mutating func row(_ values: [SQLValue], into output: inout String) {
        var first = true
        for value in values {
            if !first { output += "," }
            first = false
            switch value {
            case .null: break
            case .integer(let value): output += String(value)
            case .text(let text): Self.appendQuoted(text, to: &output)
            default: output += CellText.text(value, nullText: "")
            }
        }
        output += "\r\n"
    }

    mutating func end(into output: inout String) {}

    private func line(_ fields: [String], into output: inout String) {
        output += fields.joined(separator: ",")
        output += "\r\n"
    }

    private static func appendQuoted(_ field: String, to output: inout String) {
        if field.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) {
            output += quoted(field)
        } else {
            output += field
        }
    }

    static func quoted(_ field: String) -> String {
        guard field.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
