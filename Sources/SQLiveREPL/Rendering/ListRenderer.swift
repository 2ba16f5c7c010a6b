import SQLiveEngine

/// Writes `list` (and `tabs`) and `ascii` modes, as sqlite3 does: each
/// row's values joined by the column separator, ended by the row
/// separator, NULL as the `.nullvalue` text; the header line (with
/// `.headers on`) comes before the first row, so a statement that returns
/// no row prints nothing.
struct ListRenderer: RowRenderer {
    let settings: RenderSettings
    private let columnSeparator: [UInt8]
    private let rowSeparator: [UInt8]
    private var columns: [String] = []
    private var rowCount = 0

    init(settings: RenderSettings) {
        self.settings = settings
        columnSeparator = Array(settings.columnSeparator.utf8)
        rowSeparator = Array(settings.rowSeparator.utf8)
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        self.columns = columns
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        self.row(row, style: .plain, into: &output)
    }

    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        if rowCount == 0 && settings.headers {
            for (index, column) in columns.enumerated() {
                if index > 0 { output.append(columnSeparator) }
                output.append(column)
            }
            output.append(rowSeparator)
        }
        rowCount += 1
        for column in 0..<row.count {
            if column > 0 { output.append(columnSeparator) }
            output.appendCell(row, at: column, settings: settings, style: style.cell(column))
        }
        output.append(rowSeparator)
    }

    mutating func end(into output: inout OutputBuffer) {}
}
