import SQLiveEngine

/// Draws `box`, `table` and `markdown` grids.
///
/// Column widths depend on every row, so the cells' texts are kept until
/// `end`, as sqlite3 does. When the grid is wider than `maxWidth`, the
/// widest columns are narrowed and their cells cut with `…` (markdown is
/// never cut: it is meant to be pasted). Numbers are right-aligned.
///
/// ```text
/// ┌────┬──────────────────┐
/// │ id │      title       │
/// ├────┼──────────────────┤
/// │  1 │ Family gin rummy │
/// └────┴──────────────────┘
/// ```
struct GridRenderer: RowRenderer {
    struct Cell {
        var text: String
        var width: Int
        var rightAligned: Bool
        var isNull: Bool
    }

    let settings: RenderSettings
    private var columns: [String] = []
    private var rows: [[Cell]] = []

    init(settings: RenderSettings) {
        self.settings = settings
    }

    mutating func begin(columns: [String], into output: inout String) {
        self.columns = columns
        rows = []
    }

    mutating func row(_ values: [SQLValue], into output: inout String) {
        rows.append(
            values.map { value in
                let text = CellText.singleLine(CellText.text(value, nullText: settings.nullText))
                let escaped = settings.mode == .markdown ? text.replacingOccurrences(of: "|", with: "\\|") : text
                return Cell(
                    text: escaped, width: CellText.width(escaped), rightAligned: CellText.isNumeric(value),
                    isNull: value.isNull)
            })
    }

    mutating func end(into output: inout String) {
        let headers = columns.map { name in
            let text = CellText.singleLine(name)
            return Cell(text: text, width: CellText.width(text), rightAligned: false, isNull: false)
        }
        var widths = headers.map(\.width)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.width)
            }
        }
        if settings.mode != .markdown, let maxWidth = settings.maxWidth {
            widths = Self.fit(widths, into: maxWidth)
        }
        switch settings.mode {
        case .box:
            output += "┌" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┬") + "┐\n"
            line(headers, widths: widths, separator: "│", centered: true, into: &output)
            output += "├" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┼") + "┤\n"
            for row in rows { line(row, widths: widths, separator: "│", centered: false, into: &output) }
            output += "└" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┴") + "┘\n"
        case .table:
            let rule = "+" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+") + "+\n"
            output += rule
            line(headers, widths: widths, separator: "|", centered: false, into: &output)
            output += rule
            for row in rows { line(row, widths: widths, separator: "|", centered: false, into: &output) }
            output += rule
        default:
            line(headers, widths: widths, separator: "|", centered: false, into: &output)
            output += "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|\n"
            for row in rows { line(row, widths: widths, separator: "|", centered: false, into: &output) }
        }
        rows = []
    }

    private func line(_ cells: [Cell], widths: [Int], separator: String, centered: Bool, into output: inout String) {
        output += separator
        for (index, width) in widths.enumerated() {
            var cell = index < cells.count ? cells[index] : Cell(text: "", width: 0, rightAligned: false, isNull: false)
            if cell.width > width {
                cell.text = CellText.truncate(cell.text, toWidth: width)
                cell.width = CellText.width(cell.text)
            }
            let padding = width - cell.width
            let (left, right) =
                centered
                ? (padding / 2, padding - padding / 2)
                : cell.rightAligned ? (padding, 0) : (0, padding)
            output += " " + String(repeating: " ", count: left)
            if cell.isNull && settings.colour {
                output += ANSI.dim + cell.text + ANSI.reset
            } else {
                output += cell.text
            }
            output += String(repeating: " ", count: right) + " " + separator
        }
        output += "\n"
    }

    /// Narrows the widest columns until the grid fits, keeping each column
    /// at least three characters wide.
    static func fit(_ widths: [Int], into maxWidth: Int) -> [Int] {
        var widths = widths
        let frame = 3 * widths.count + 1
        var excess = widths.reduce(frame, +) - maxWidth
        let minimum = 3
        while excess > 0 {
            guard let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > minimum
            else { break }
            let others = widths.enumerated().filter { $0.offset != widest }.map(\.element).max() ?? minimum
            let step = min(excess, max(1, widths[widest] - max(others, minimum)))
            widths[widest] -= step
            excess -= step
        }
        return widths
    }
}
