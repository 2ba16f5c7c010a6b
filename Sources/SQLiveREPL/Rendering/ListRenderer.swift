import SQLiveEngine

/// Writes values separated by `|`, one row per line, with a header line
/// when headers are on, as sqlite3's list mode does.
struct ListRenderer: RowRenderer {
    let settings: RenderSettings

    mutating func begin(columns: [String], into output: inout String) {
        guard settings.headers else { return }
        output += columns.joined(separator: "|")
        output += "\n"
    }

    mutating func row(_ values: [SQLValue], into output: inout String) {
        var first = true
        for value in values {
            if !first { output += "|" }
            first = false
            switch value {
            case .text(let text): output += text
            case .integer(let value): output += String(value)
            case .null:
                output += settings.colour ? ANSI.dim + settings.nullText + ANSI.reset : settings.nullText
            default: output += CellText.text(value, nullText: settings.nullText)
            }
        }
        output += "\n"
    }

    mutating func end(into output: inout String) {}
}
