import Foundation
import SQLiveEngine

/// Draws `box`, `table` and `markdown` grids.
///
/// Column widths depend on every row, so the cells' texts are kept until
/// `end`, as sqlite3 does: as bytes, one after the other in one buffer,
/// with a 16-byte record per cell (where it ends, its width, how to draw
/// it), rather than a `String` and a record per value. When the grid is
/// wider than `maxWidth`, the widest columns are narrowed and their cells
/// cut with `…` (markdown is never cut: it is meant to be pasted). Numbers
/// are right-aligned. With colour, NULL is dimmed and the cells of a
/// live query's re-print are highlighted as their `RowStyle` says.
///
/// ```text
/// ┌────┬──────────────────┐
/// │ id │      title       │
/// ├────┼──────────────────┤
/// │  1 │ Family gin rummy │
/// └────┴──────────────────┘
/// ```
struct GridRenderer: RowRenderer {
    /// A cell: its text runs from the previous cell's `end` to its own.
    private struct Cell {
        var end: Int
        var width: Int32
        var rightAligned: Bool
        var isNull: Bool
        var style: CellStyle = .plain
    }

    /// Cells and their texts, kept in order.
    ///
    /// Invariant: `cells[i]`'s text is `text.bytes[start(i)..<cells[i].end]`,
    /// where `start(i)` is the previous cell's end (0 for the first).
    private struct Cells {
        var text = OutputBuffer()
        var cells: [Cell] = []

        func start(of index: Int) -> Int {
            index == 0 ? 0 : cells[index - 1].end
        }

        /// Records the text appended since the last cell as a cell.
        mutating func close(from start: Int, rightAligned: Bool, isNull: Bool, style: CellStyle = .plain) {
            let bytes = text.bytes[start...]
            let width =
                bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
                ? bytes.count : CellText.width(String(decoding: bytes, as: UTF8.self))
            cells.append(
                Cell(end: text.count, width: Int32(width), rightAligned: rightAligned, isNull: isNull, style: style))
        }

        /// Replaces the text appended since `start` (a slow path, for
        /// control characters and markdown's `|`).
        mutating func replace(from start: Int, with replacement: String) {
            text.truncate(to: start)
            text.append(replacement)
        }
    }

    let settings: RenderSettings
    private var columns: [String] = []
    /// The rows' cells, `columns.count` per row.
    private var body = Cells()

    init(settings: RenderSettings) {
        self.settings = settings
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        self.columns = columns
        body = Cells()
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        self.row(row, style: .plain, into: &output)
    }

    mutating func row(_ row: some RowValues, style: RowStyle, into output: inout OutputBuffer) {
        for column in 0..<columns.count {
            let start = body.text.count
            guard column < row.count else {
                body.close(from: start, rightAligned: false, isNull: false)
                continue
            }
            let type = row.type(at: column)
            switch type {
            case .null:
                body.text.append(settings.nullText)
            case .integer:
                body.text.append(integer: row.integer(at: column))
            case .real:
                body.text.append(real: row.real(at: column))
            case .text:
                row.withUTF8(at: column) { bytes in
                    if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                        body.text.append(CellText.singleLine(String(decoding: bytes, as: UTF8.self)))
                    } else {
                        body.text.append(bytes)
                    }
                }
            case .blob:
                row.withBlob(at: column) { body.text.append(blobLiteral: $0) }
            }
            if settings.mode == .markdown && body.text.bytes[start...].contains(UInt8(ascii: "|")) {
                let text = String(decoding: body.text.bytes[start...], as: UTF8.self)
                body.replace(from: start, with: text.replacingOccurrences(of: "|", with: "\\|"))
            }
            body.close(
                from: start, rightAligned: type == .integer || type == .real, isNull: type == .null,
                style: style.cell(column))
        }
    }

    mutating func end(into output: inout OutputBuffer) {
        var headers = Cells()
        for name in columns {
            let start = headers.text.count
            headers.text.append(CellText.singleLine(name))
            headers.close(from: start, rightAligned: false, isNull: false)
        }
        var widths = headers.cells.map { Int($0.width) }
        if !widths.isEmpty {
            for (index, cell) in body.cells.enumerated() {
                let column = index % widths.count
                widths[column] = max(widths[column], Int(cell.width))
            }
        }
        if settings.mode != .markdown, let maxWidth = settings.maxWidth {
            widths = Self.fit(widths, into: maxWidth)
        }
        let rowCount = widths.isEmpty ? 0 : body.cells.count / widths.count
        let rows = 0..<rowCount
        switch settings.mode {
        case .box:
            output.append("┌" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┬") + "┐\n")
            line(0, of: headers, widths: widths, separator: "│", centered: true, into: &output)
            output.append("├" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┼") + "┤\n")
            for row in rows { line(row, of: body, widths: widths, separator: "│", centered: false, into: &output) }
            output.append("└" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┴") + "┘\n")
        case .table:
            let rule = "+" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+") + "+\n"
            output.append(rule)
            line(0, of: headers, widths: widths, separator: "|", centered: false, into: &output)
            output.append(rule)
            for row in rows { line(row, of: body, widths: widths, separator: "|", centered: false, into: &output) }
            output.append(rule)
        default:
            line(0, of: headers, widths: widths, separator: "|", centered: false, into: &output)
            output.append("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|\n")
            for row in rows { line(row, of: body, widths: widths, separator: "|", centered: false, into: &output) }
        }
        body = Cells()
    }

    /// Draws one row of cells.
    private func line(
        _ row: Int, of cells: Cells, widths: [Int], separator: String, centered: Bool, into output: inout OutputBuffer
    ) {
        output.append(separator)
        cells.text.bytes.withUnsafeBufferPointer { text in
            for (column, width) in widths.enumerated() {
                let index = row * widths.count + column
                let cell = cells.cells[index]
                let bytes = UnsafeBufferPointer(rebasing: text[cells.start(of: index)..<cell.end])
                var cut: String?
                var cellWidth = Int(cell.width)
                if cellWidth > width {
                    let truncated = CellText.truncate(String(decoding: bytes, as: UTF8.self), toWidth: width)
                    cut = truncated
                    cellWidth = CellText.width(truncated)
                }
                let padding = width - cellWidth
                let (left, right) =
                    centered
                    ? (padding / 2, padding - padding / 2)
                    : cell.rightAligned ? (padding, 0) : (0, padding)
                output.append(repeating: 0x20, count: left + 1)
                let prefix = settings.colour ? cell.style.prefix(isNull: cell.isNull) : ""
                if !prefix.isEmpty { output.append(prefix) }
                if let cut { output.append(cut) } else { output.append(bytes) }
                if !prefix.isEmpty { output.append(ANSI.reset) }
                output.append(repeating: 0x20, count: right + 1)
                output.append(separator)
            }
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
