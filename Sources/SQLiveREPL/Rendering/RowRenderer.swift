import SQLiveEngine

/// Turns one statement's result into text, row by row.
///
/// A renderer is a value: `begin`, then `row` for each row, then `end`,
/// each appending bytes to the output. Rows are read column by column
/// (`RowValues`), straight from the statement being stepped when results
/// stream. Streaming modes (`csv`, `json`, `line`, `list`) write every row
/// at once and hold nothing; grid modes (`box`, `table`, `markdown`) keep
/// the rows' cell texts until `end`, because column widths depend on every
/// row, as in sqlite3.
///
/// ```swift
/// var renderer = makeRenderer(RenderSettings(mode: .csv, headers: true))
/// var output = OutputBuffer()
/// renderer.begin(columns: ["id", "name"], into: &output)
/// renderer.row([.integer(1), .text("Blob")], into: &output)
/// renderer.end(into: &output)   // "id,name\r\n1,Blob\r\n"
/// ```
public protocol RowRenderer {
    mutating func begin(columns: [String], into output: inout OutputBuffer)
    mutating func row(_ row: some RowValues, into output: inout OutputBuffer)
    /// A row of a live query's re-print, highlighted as `style` says when
    /// colour is on. Renderers that cannot highlight (csv, json) draw it plain.
    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer)
    mutating func end(into output: inout OutputBuffer)
}

extension RowRenderer {
    public mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        self.row(row, into: &output)
    }
}

extension OutputMode {
    /// Whether re-prints in this mode highlight what changed (with colour):
    /// the human-readable modes, not the data formats (csv, json).
    var highlightsChanges: Bool {
        switch self {
        case .box, .table, .markdown, .list, .tabs, .line: true
        case .csv, .json: false
        }
    }
}

/// The renderer for the settings' mode.
public func makeRenderer(_ settings: RenderSettings) -> any RowRenderer {
    switch settings.mode {
    case .box, .table, .markdown: GridRenderer(settings: settings)
    case .csv: CSVRenderer(settings: settings)
    case .json: JSONRenderer()
    case .line: LineRenderer(settings: settings)
    case .list: ListRenderer(settings: settings)
    case .tabs: ListRenderer(settings: settings, separator: UInt8(ascii: "\t"))
    }
}

extension RowRenderer {
    /// Renders a whole result at once.
    public mutating func render(columns: [String], rows: [[SQLValue]]) -> String {
        var output = OutputBuffer()
        begin(columns: columns, into: &output)
        for row in rows { self.row(row, into: &output) }
        end(into: &output)
        return output.string
    }
}

/// Renders a whole result in the settings' mode.
public func render(columns: [String], rows: [[SQLValue]], settings: RenderSettings) -> String {
    var renderer = makeRenderer(settings)
    return renderer.render(columns: columns, rows: rows)
}

/// Renders rows with their styles (highlighted when colour is on).
public func render(columns: [String], styledRows rows: [StyledRow], settings: RenderSettings) -> String {
    var renderer = makeRenderer(settings)
    var output = OutputBuffer()
    renderer.begin(columns: columns, into: &output)
    for row in rows { renderer.row(row.values, style: row.style, into: &output) }
    renderer.end(into: &output)
    return output.string
}

extension OutputBuffer {
    /// Appends a value as the human-readable modes show it: NULL as
    /// `nullText` (dimmed with colour), a REAL like sqlite3, a BLOB as an
    /// `X'...'` literal; with colour, highlighted as `style` says.
    mutating func appendCell(
        _ row: some RowValues, at column: Int, nullText: String, colour: Bool, style: CellStyle = .plain
    ) {
        let type = row.type(at: column)
        let prefix = colour ? style.prefix(isNull: type == .null) : ""
        if !prefix.isEmpty { append(prefix) }
        switch type {
        case .text: row.withUTF8(at: column) { append($0) }
        case .integer: append(integer: row.integer(at: column))
        case .real: append(real: row.real(at: column))
        case .null: append(nullText)
        case .blob: appendBlobLiteral(row, at: column)
        }
        if !prefix.isEmpty { append(ANSI.reset) }
    }

    /// Appends a BLOB column as an `X'...'` literal.
    mutating func appendBlobLiteral(_ row: some RowValues, at column: Int) {
        row.withBlob(at: column) { append(blobLiteral: $0) }
    }
}
