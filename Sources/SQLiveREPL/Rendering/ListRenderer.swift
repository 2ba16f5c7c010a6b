import SQLiveEngine

/// Writes values separated by `|`, one row per line, with a header line
/// when headers are on, as sqlite3's list mode does.
struct ListRenderer: RowRenderer {
    let settings: RenderSettings

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        guard settings.headers else { return }
        output.append(columns.joined(separator: "|"))
        output.append(byte: 0x0A)
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        self.row(row, style: .plain, into: &output)
    }

    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        for column in 0..<row.count {
            if column > 0 { output.append(byte: UInt8(ascii: "|")) }
            output.appendCell(
                row, at: column, nullText: settings.nullText, colour: settings.colour, style: style.cell(column))
        }
        output.append(byte: 0x0A)
    }

    mutating func end(into output: inout OutputBuffer) {}
}
