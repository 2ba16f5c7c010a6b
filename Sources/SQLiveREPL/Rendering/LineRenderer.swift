import SQLiveEngine

/// Writes one `column = value` line per value, rows separated by a blank
/// line, column names right-aligned, as sqlite3's line mode does.
struct LineRenderer: RowRenderer {
    let settings: RenderSettings
    private var names: [String] = []
    private var rowCount = 0

    init(settings: RenderSettings) {
        self.settings = settings
    }

    mutating func begin(columns: [String], into output: inout String) {
        let width = columns.map(CellText.width).max() ?? 0
        names = columns.map { String(repeating: " ", count: width - CellText.width($0)) + $0 + " = " }
        rowCount = 0
    }

    mutating func row(_ values: [SQLValue], into output: inout String) {
        if rowCount > 0 { output += "\n" }
        for (index, value) in values.enumerated() {
            output += index < names.count ? names[index] : " = "
            let text = CellText.text(value, nullText: settings.nullText)
            output += value.isNull && settings.colour ? ANSI.dim + text + ANSI.reset : text
            output += "\n"
        }
        rowCount += 1
    }

    mutating func end(into output: inout String) {}
}
