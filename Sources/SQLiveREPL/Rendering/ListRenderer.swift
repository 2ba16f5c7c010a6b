import SQLiveEngine

/// Writes `list` (and `tabs`) and `ascii` modes, as sqlite3 does: each
/// row's values joined by the column separator, ended by the row
/// separator, NULL as the `.nullvalue` text; the header line (with
/// `.headers on`) comes before the first row, so a statement that returns
/// no row prints nothing.
struct ListRenderer: RowRenderer {
    let settings: RenderSettings
    private var rows: SeparatedRows

    init(settings: RenderSettings) {
        self.settings = settings
        rows = SeparatedRows(settings)
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        rows.begin(columns: columns)
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        self.row(row, style: .plain, into: &output)
    }

    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        let settings = settings
        rows.write(
            columnCount: row.count, headers: settings.headers, into: &output,
            name: { name, output in output.append(name) },
            value: { column, output in
                output.appendCell(row, at: column, settings: settings, style: style.cell(column))
            })
    }

    mutating func end(into output: inout OutputBuffer) {}
}
