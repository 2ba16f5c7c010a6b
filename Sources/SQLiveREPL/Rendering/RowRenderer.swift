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
    mutating func end(into output: inout OutputBuffer)
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

extension OutputBuffer {
    /// Appends a value as the human-readable modes show it: NULL as
    /// `nullText` (dimmed with colour), a REAL like sqlite3, a BLOB as an
    /// `X'...'` literal.
    mutating func appendCell(_ row: some RowValues, at column: Int, nullText: String, colour: Bool) {
        switch row.type(at: column) {
        case .text: row.withUTF8(at: column) { append($0) }
        case .integer: append(integer: row.integer(at: column))
        case .real: append(real: row.real(at: column))
        case .null:
            if colour {
                append(ANSI.dim + nullText + ANSI.reset)
            } else {
                append(nullText)
            }
        case .blob: appendBlobLiteral(row, at: column)
        }
    }

    /// Appends a BLOB column as an `X'...'` literal.
    mutating func appendBlobLiteral(_ row: some RowValues, at column: Int) {
        row.withBlob(at: column) { append(blobLiteral: $0) }
    }
}
