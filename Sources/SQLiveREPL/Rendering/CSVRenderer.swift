import SQLiveEngine

/// Writes `csv` mode as sqlite3 does: values joined by the column
/// separator (`,` after `.mode csv`), rows ended by the row separator
/// (CRLF after `.mode csv`, LF after the command line's `-csv`). A value is
/// quoted, quotes doubled, when it is empty text, holds the separator, or
/// holds a control, a space, a quote or a byte of non-ASCII text; NULL is
/// the `.nullvalue` text (empty by default), never quoted.
struct CSVRenderer: RowRenderer {
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
        if rowCount == 0 && settings.headers {
            for (index, column) in columns.enumerated() {
                if index > 0 { output.append(columnSeparator) }
                var column = column
                column.withUTF8 { SQLiteText.appendCSV($0, separator: columnSeparator, to: &output) }
            }
            output.append(rowSeparator)
        }
        rowCount += 1
        for column in 0..<row.count {
            if column > 0 { output.append(columnSeparator) }
            SQLiteText.withText(row, at: column) { text in
                if let text {
                    SQLiteText.appendCSV(text, separator: columnSeparator, to: &output)
                } else {
                    output.append(settings.nullText)
                }
            }
        }
        output.append(rowSeparator)
    }

    mutating func end(into output: inout OutputBuffer) {}
}
