import SQLiveEngine

/// Writes `insert` and `quote` modes as sqlite3 does: values as SQL
/// literals (text quoted, a BLOB as `X'…'`, NULL as `NULL` whatever
/// `.nullvalue` says).
///
/// `insert`: an `INSERT INTO table VALUES(…);` per row (with `.headers
/// on`, the column list too), text with line breaks as
/// `replace('a\nb','\n',char(10))`, a REAL as `N.0` when integral, else
/// `%!.20g`. `quote`: values joined by the column separator, rows ended by
/// the row separator, a REAL as `%!.20g`, names quoted in the header line.
struct SQLLiteralRenderer: RowRenderer {
    let settings: RenderSettings
    private let insert: Bool
    private let columnSeparator: [UInt8]
    private let rowSeparator: [UInt8]
    private var columns: [String] = []
    private var rowCount = 0
    /// `INSERT INTO table(columns) VALUES(` (`insert` mode).
    private var prefix: [UInt8] = []

    init(settings: RenderSettings) {
        self.settings = settings
        insert = settings.mode == .insert
        columnSeparator = insert ? [UInt8(ascii: ",")] : Array(settings.columnSeparator.utf8)
        rowSeparator = Array(settings.rowSeparator.utf8)
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        self.columns = columns
        rowCount = 0
        guard insert else { return }
        var text = "INSERT INTO " + settings.insertTable
        if settings.headers {
            text += "(" + columns.map(Self.columnName).joined(separator: ",") + ")"
        }
        prefix = Array((text + " VALUES(").utf8)
    }

    /// A column name in `insert`'s column list: in double quotes when it is
    /// not a plain identifier or is a keyword.
    private static func columnName(_ name: String) -> String {
        SQLiteText.quotedTableName(name)
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        if insert {
            output.append(prefix)
        } else if rowCount == 0 && settings.headers {
            for (index, column) in columns.enumerated() {
                if index > 0 { output.append(columnSeparator) }
                SQLiteText.appendQuoted(column, to: &output)
            }
            output.append(rowSeparator)
        }
        rowCount += 1
        for column in 0..<row.count {
            if column > 0 { output.append(columnSeparator) }
            switch row.type(at: column) {
            case .null: output.append("NULL")
            case .integer: output.append(integer: row.integer(at: column))
            case .real: appendReal(row.real(at: column), to: &output)
            case .text:
                row.withUTF8(at: column) { text in
                    let text = SQLiteText.untilNUL(text)
                    if insert {
                        DumpText.appendTextLiteral(text, to: &output)
                    } else {
                        SQLiteText.appendQuoted(text, to: &output)
                    }
                }
            case .blob: output.appendBlobLiteral(row, at: column)
            }
        }
        if insert { output.append(");\n") } else { output.append(rowSeparator) }
    }

    private func appendReal(_ value: Double, to output: inout OutputBuffer) {
        if insert {
            if value.isInfinite {
                output.append(value < 0 ? "-1e999" : "1e999")
                return
            }
            // sqlite3 casts to a 64-bit integer and back: integral values in range print as `N.0`.
            if value.rounded(.towardZero) == value, value >= -0x1p63, value < 0x1p63 {
                output.append(integer: Int64(value))
                output.append(".0")
                return
            }
        }
        SQLiteText.withReal20(value) { output.append($0) }
    }

    mutating func end(into output: inout OutputBuffer) {}
}
