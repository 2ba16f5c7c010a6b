import SQLiveEngine

/// Writes `html` mode as sqlite3 does: a `<TR>` per row, a `<TD>` line per
/// value (`<TH>` for the header row, with `.headers on`), `<`, `&`, `>`,
/// `"` and `'` as entities; no `<TABLE>` around them.
struct HTMLRenderer: RowRenderer {
    let settings: RenderSettings
    private var columns: [String] = []
    private var rowCount = 0

    init(settings: RenderSettings) {
        self.settings = settings
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        self.columns = columns
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        if rowCount == 0 && settings.headers {
            output.append("<TR>")
            for column in columns {
                output.append("<TH>")
                var column = column
                column.withUTF8 { SQLiteText.appendHTML($0, to: &output) }
                output.append("</TH>\n")
            }
            output.append("</TR>\n")
        }
        rowCount += 1
        output.append("<TR>")
        for column in 0..<row.count {
            output.append("<TD>")
            SQLiteText.withText(row, at: column) { text in
                if let text {
                    SQLiteText.appendHTML(text, to: &output)
                } else {
                    var null = settings.nullText
                    null.withUTF8 { SQLiteText.appendHTML($0, to: &output) }
                }
            }
            output.append("</TD>\n")
        }
        output.append("</TR>\n")
    }

    mutating func end(into output: inout OutputBuffer) {}
}

/// Writes `tcl` mode as sqlite3 does: every value (and name, with
/// `.headers on`) as a C string literal, joined by the column separator (a
/// space), rows ended by the row separator.
struct TclRenderer: RowRenderer {
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
        let null = settings.nullText
        rows.write(
            columnCount: row.count, headers: settings.headers, into: &output,
            name: { name, output in
                var name = name
                name.withUTF8 { SQLiteText.appendCString($0, to: &output) }
            },
            value: { column, output in
                SQLiteText.withText(row, at: column) { text in
                    if let text {
                        SQLiteText.appendCString(text, to: &output)
                    } else {
                        var null = null
                        null.withUTF8 { SQLiteText.appendCString($0, to: &output) }
                    }
                }
            })
    }

    mutating func end(into output: inout OutputBuffer) {}
}

/// `.mode count` prints the number of rows of each statement that returns
/// some (`3 rows`); `.mode off` prints nothing.
struct CountRenderer: RowRenderer {
    let silent: Bool
    private var rowCount = 0

    init(silent: Bool = false) {
        self.silent = silent
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        rowCount += 1
    }

    mutating func end(into output: inout OutputBuffer) {
        guard !silent, rowCount > 0 else { return }
        output.append(rowCount == 1 ? "1 row\n" : "\(rowCount) rows\n")
    }
}
