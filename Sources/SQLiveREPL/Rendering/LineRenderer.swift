import SQLiveEngine

/// Writes `line` mode as sqlite3 does: one `name = value` line per value,
/// names right-aligned to the longest (at least 5 bytes: sqlite3 counts
/// bytes), each line and each blank line between rows ended by the row
/// separator.
struct LineRenderer: RowRenderer {
    let settings: RenderSettings
    private let rowSeparator: [UInt8]
    private var names: [[UInt8]] = []
    private var rowCount = 0

    init(settings: RenderSettings) {
        self.settings = settings
        rowSeparator = Array(settings.rowSeparator.utf8)
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        let width = max(5, columns.map(\.utf8.count).max() ?? 0)
        names = columns.map {
            Array(repeating: 0x20, count: width - $0.utf8.count) + Array($0.utf8) + Array(" = ".utf8)
        }
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        self.row(row, style: .plain, into: &output)
    }

    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        if rowCount > 0 { output.append(rowSeparator) }
        for column in 0..<row.count {
            if column < names.count { output.append(names[column]) } else { output.append(" = ") }
            output.appendCell(row, at: column, settings: settings, style: style.cell(column))
            output.append(rowSeparator)
        }
        rowCount += 1
    }

    mutating func end(into output: inout OutputBuffer) {}
}
