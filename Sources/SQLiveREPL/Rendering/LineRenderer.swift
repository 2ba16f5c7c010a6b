import SQLiveEngine

/// Writes one `column = value` line per value, rows separated by a blank
/// line, column names right-aligned, as sqlite3's line mode does.
struct LineRenderer: RowRenderer {
    let settings: RenderSettings
    private var names: [String] = []
    private var rowCount = 0

    init(settings: RenderSettings) {
        self.settings = settings
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        let width = columns.map(CellText.width).max() ?? 0
        names = columns.map { String(repeating: " ", count: width - CellText.width($0)) + $0 + " = " }
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        self.row(row, style: .plain, into: &output)
    }

    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        if rowCount > 0 { output.append(byte: 0x0A) }
        for column in 0..<row.count {
            output.append(column < names.count ? names[column] : " = ")
            output.appendCell(
                row, at: column, nullText: settings.nullText, colour: settings.colour, style: style.cell(column))
            output.append(byte: 0x0A)
        }
        rowCount += 1
    }

    mutating func end(into output: inout OutputBuffer) {}
}
