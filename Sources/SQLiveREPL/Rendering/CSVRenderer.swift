import SQLiveEngine

/// Writes `csv` mode as sqlite3 does: values joined by the column
/// separator (`,` after `.mode csv`), rows ended by the row separator
/// (CRLF after `.mode csv`, LF after the command line's `-csv`). A value is
/// quoted, quotes doubled, when it is empty text, holds the separator, or
/// holds a control, a space, a quote or a byte of non-ASCII text; NULL is
/// the `.nullvalue` text (empty by default), never quoted.
struct CSVRenderer: RowRenderer {
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
        let (separator, null) = (rows.columnSeparator, settings.nullText)
        rows.write(
            columnCount: row.count, headers: settings.headers, into: &output,
            name: { name, output in
                var name = name
                name.withUTF8 { SQLiteText.appendCSV($0, separator: separator, to: &output) }
            },
            value: { column, output in
                SQLiteText.withText(row, at: column) { text in
                    if let text {
                        SQLiteText.appendCSV(text, separator: separator, to: &output)
                    } else {
                        output.append(null)
                    }
                }
            })
    }

    mutating func end(into output: inout OutputBuffer) {}
}
