import SQLiveEngine

/// Turns one statement's result into text, row by row.
///
/// A renderer is a value: `begin`, then `row` for each row, then `end`,
/// each appending to the output. Streaming modes (`csv`, `json`, `line`,
/// `list`) write every row at once and hold nothing; grid modes (`box`,
/// `table`, `markdown`) keep the rows' cell texts until `end`, because
/// column widths depend on every row, as in sqlite3.
///
/// ```swift
/// var renderer = makeRenderer(RenderSettings(mode: .csv, headers: true))
/// var text = ""
/// renderer.begin(columns: ["id", "name"], into: &text)
/// renderer.row([.integer(1), .text("Blob")], into: &text)
/// renderer.end(into: &text)   // "id,name\r\n1,Blob\r\n"
/// ```
public protocol RowRenderer {
    mutating func begin(columns: [String], into output: inout String)
    mutating func row(_ values: [SQLValue], into output: inout String)
    mutating func end(into output: inout String)
}

/// The renderer for the settings' mode.
public func makeRenderer(_ settings: RenderSettings) -> any RowRenderer {
    switch settings.mode {
    case .box, .table, .markdown: GridRenderer(settings: settings)
    case .csv: CSVRenderer(settings: settings)
    case .json: JSONRenderer()
    case .line: LineRenderer(settings: settings)
    case .list: ListRenderer(settings: settings)
    }
}

extension RowRenderer {
    /// Renders a whole result at once.
    public mutating func render(columns: [String], rows: [[SQLValue]]) -> String {
        var output = ""
        begin(columns: columns, into: &output)
        for row in rows { self.row(row, into: &output) }
        end(into: &output)
        return output
    }
}

/// Renders a whole result in the settings' mode.
public func render(columns: [String], rows: [[SQLValue]], settings: RenderSettings) -> String {
    var renderer = makeRenderer(settings)
    return renderer.render(columns: columns, rows: rows)
}
