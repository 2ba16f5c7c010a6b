import SQLiveEngine

/// Writes values separated by `|` (or tabs, in `tabs` mode), one row per
/// line, with a header line when headers are on, as sqlite3's list and
/// tabs modes do.
struct ListRenderer: RowRenderer {
    let settings: RenderSettings
    var separator = UInt8(ascii: "|")

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        guard settings.headers else { return }
        for (index, column) in columns.enumerated() {
            if index > 0 { output.append(byte: separator) }
            output.append(column)
        }
        output.append(byte: 0x0A)
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        self.row(row, style: .plain, into: &output)
    }

    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        for column in 0..<row.count {
            if column > 0 { output.append(byte: separator) }
            output.appendCell(
                row, at: column, nullText: settings.nullText, colour: settings.colour, style: style.cell(column))
        }
        output.append(byte: 0x0A)
    }

    mutating func end(into output: inout OutputBuffer) {}
}
