import Foundation
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

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        self.columns = columns
        rows = []
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        var cells: [Cell] = []
        cells.reserveCapacity(row.count)
        for column in 0..<row.count {
            let type = row.type(at: column)
            var text =
                switch type {
                case .null: settings.nullText
                case .integer: String(row.integer(at: column))
                case .real: CellText.real(row.real(at: column))
                case .text: CellText.singleLine(row.withUTF8(at: column) { String(decoding: $0, as: UTF8.self) })
                case .blob: row.withBlob(at: column) { CellText.blobLiteral($0) }
                }
            if settings.mode == .markdown { text = text.replacingOccurrences(of: "|", with: "\\|") }
            cells.append(
                Cell(
                    text: text, width: CellText.width(text), rightAligned: type == .integer || type == .real,
                    isNull: type == .null))
        }
        rows.append(cells)
    }

    mutating func end(into output: inout OutputBuffer) {
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
            output.append("┌" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┬") + "┐\n")
            line(headers, widths: widths, separator: "│", centered: true, into: &output)
            output.append("├" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┼") + "┤\n")
            for row in rows { line(row, widths: widths, separator: "│", centered: false, into: &output) }
            output.append("└" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┴") + "┘\n")
        case .table:
            let rule = "+" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+") + "+\n"
            output.append(rule)
            line(headers, widths: widths, separator: "|", centered: false, into: &output)
            output.append(rule)
            for row in rows { line(row, widths: widths, separator: "|", centered: false, into: &output) }
            output.append(rule)
        default:
            line(headers, widths: widths, separator: "|", centered: false, into: &output)
            output.append("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|\n")
            for row in rows { line(row, widths: widths, separator: "|", centered: false, into: &output) }
        }
        rows = []
    }

    private func line(
        _ cells: [Cell], widths: [Int], separator: String, centered: Bool, into output: inout OutputBuffer
    ) {
        output.append(separator)
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
            output.append(repeating: 0x20, count: left + 1)
            if cell.isNull && settings.colour {
                output.append(ANSI.dim + cell.text + ANSI.reset)
            } else {
                output.append(cell.text)
            }
            output.append(repeating: 0x20, count: right + 1)
            output.append(separator)
        }
        output.append(byte: 0x0A)
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
