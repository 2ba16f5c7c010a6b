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
        case .box, .qbox, .table, .markdown, .column, .list, .tabs, .line: true
        case .csv, .json, .ascii, .html, .insert, .quote, .tcl, .count, .off: false
        }
    }
}

/// The renderer for the settings' mode; `sql` is the statement's, for
/// `.explain auto` (an `EXPLAIN` statement prints in the explain layout).
public func makeRenderer(_ settings: RenderSettings, sql: String? = nil) -> any RowRenderer {
    let explainStatement = sql.map(ExplainRenderer.isExplain) ?? false
    if settings.explain == .all || (settings.explain == .explainStatements && explainStatement) {
        return ExplainRenderer(settings: settings, explainStatement: explainStatement)
    }
    switch settings.mode {
    case .box, .qbox, .table, .markdown:
        if settings.terminal { return GridRenderer(settings: settings) }
        return ColumnarRenderer(settings: settings)
    case .column: return ColumnarRenderer(settings: settings)
    case .csv: return CSVRenderer(settings: settings)
    case .json: return JSONRenderer()
    case .line: return LineRenderer(settings: settings)
    case .list, .tabs, .ascii: return ListRenderer(settings: settings)
    case .html: return HTMLRenderer(settings: settings)
    case .tcl: return TclRenderer(settings: settings)
    case .insert, .quote: return SQLLiteralRenderer(settings: settings)
    case .count: return CountRenderer()
    case .off: return CountRenderer(silent: true)
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
    /// Appends a value as `list` and `line` show it: NULL as `nullText`
    /// (dimmed with colour), a REAL like sqlite3, a BLOB's own bytes as
    /// sqlite3 writes them (an `X'...'` literal in `terminal` style); with
    /// colour, highlighted as `style` says.
    mutating func appendCell(
        _ row: some RowValues, at column: Int, settings: RenderSettings, style: CellStyle = .plain
    ) {
        let type = row.type(at: column)
        let prefix = settings.colour ? style.prefix(isNull: type == .null) : ""
        if !prefix.isEmpty { append(prefix) }
        switch type {
        case .text: row.withUTF8(at: column) { append(settings.terminal ? $0 : SQLiteText.untilNUL($0)) }
        case .integer: append(integer: row.integer(at: column))
        case .real: append(real: row.real(at: column))
        case .null: append(settings.nullText)
        case .blob:
            if settings.terminal {
                appendBlobLiteral(row, at: column)
            } else {
                row.withBlob(at: column) { append(SQLiteText.untilNUL($0.assumingMemoryBound(to: UInt8.self))) }
            }
        }
        if !prefix.isEmpty { append(ANSI.reset) }
    }

    /// Appends a BLOB column as an `X'...'` literal.
    mutating func appendBlobLiteral(_ row: some RowValues, at column: Int) {
        row.withBlob(at: column) { append(blobLiteral: $0) }
    }
}
