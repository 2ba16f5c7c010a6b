import SQLiveEngine

/// What the modes that join values by separators share (`list`, `tabs`,
/// `ascii`, `csv`, `tcl`): the two separators, the columns, and sqlite3's
/// rule that the header line (with `.headers on`) comes before the first
/// row, so a statement that returns no row prints nothing. Each mode says
/// how it writes a name and a value.
struct SeparatedRows {
    let columnSeparator: [UInt8]
    let rowSeparator: [UInt8]
    private var columns: [String] = []
    private var rowCount = 0

    init(_ settings: RenderSettings) {
        columnSeparator = Array(settings.columnSeparator.utf8)
        rowSeparator = Array(settings.rowSeparator.utf8)
    }

    mutating func begin(columns: [String]) {
        self.columns = columns
        rowCount = 0
    }

    /// Writes one row: the header line first if it is the first row and
    /// `headers` is on (each name by `name`), then the values (each by
    /// `value`, given its column), joined by the column separator, and the
    /// row separator.
    @inline(__always)
    mutating func write(
        columnCount: Int, headers: Bool, into output: inout OutputBuffer,
        name: (String, inout OutputBuffer) -> Void, value: (Int, inout OutputBuffer) -> Void
    ) {
        if rowCount == 0 && headers {
            for (index, column) in columns.enumerated() {
                if index > 0 { output.append(columnSeparator) }
                name(column, &output)
            }
            output.append(rowSeparator)
        }
        rowCount += 1
        for column in 0..<columnCount {
            if column > 0 { output.append(columnSeparator) }
            value(column, &output)
        }
        output.append(rowSeparator)
    }
}
