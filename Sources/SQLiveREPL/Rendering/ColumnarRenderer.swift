import SQLiveEngine

/// Writes the columnar modes — `column`, `table`, `markdown`, `box` — byte
/// for byte as the sqlite3 3.40.1 shell does.
///
/// Every row is held until `end`, as sqlite3 does, to size the columns. A
/// value's text (`.nullvalue` for NULL; an SQL literal with `--quote`) is
/// cut into lines: at a line break or any other control character, and at
/// the column's width — its `.width`, else `--wrap` (60 by default; 0
/// never) — where `--wordwrap on` backs up to a space or a word's edge;
/// tabs become spaces to the next multiple of 8. A row whose values take
/// several lines is drawn on as many, and then rows are separated by a rule
/// (`table`, `box`) or a blank line (`column`). Widths count characters
/// (UTF-8 sequences), as sqlite3 does; every value is left-aligned unless
/// its `.width` is negative; headers are centred in `table`, `markdown`
/// and `box`. A statement that returns no row prints nothing.
struct ColumnarRenderer: RowRenderer {
    /// Display lines of cells, in one buffer: `ends[i]` is where cell
    /// `i`'s text ends, `counts[i]` its width in characters.
    private struct Lines {
        var text: [UInt8] = []
        var ends: [Int] = []
        var counts: [Int] = []

        func bytes(_ index: Int) -> ArraySlice<UInt8> {
            text[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
        }
    }

    let settings: RenderSettings
    private var columns: [String] = []
    /// The header's cells, then each display line's.
    private var lines = Lines()
    /// For each display line, whether it ends its row.
    private var endsRow: [Bool] = []
    private var multiLine = false
    private var rowCount = 0

    init(settings: RenderSettings) {
        self.settings = settings
    }

    /// The width a column wraps at: its `.width`, else `--wrap`.
    private func wrapWidth(_ column: Int) -> Int {
        let width = column < settings.widths.count ? settings.widths[column] : 0
        return abs(width == 0 ? settings.columnar.wrap : width)
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        self.columns = columns
        lines = Lines()
        endsRow = []
        multiLine = false
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        if rowCount == 0 {
            for (index, name) in columns.enumerated() {
                _ = Array(name.utf8).withUnsafeBufferPointer { add($0[...], column: index) }
            }
        }
        rowCount += 1
        var pending: [[UInt8]?] = []
        for column in 0..<columns.count {
            let tail = Self.cellText(row, at: column, settings: settings) { text in add(text[...], column: column) }
            pending.append(tail)
        }
        // The rest of the row's values, a display line at a time.
        while pending.contains(where: { $0 != nil }) {
            endsRow.append(false)
            multiLine = true
            for column in 0..<columns.count {
                let rest = pending[column] ?? []
                pending[column] = rest.withUnsafeBufferPointer { add($0[...], column: column) }
            }
        }
        endsRow.append(true)
    }

    /// Calls `body` with the text a value shows, and returns what it returns.
    private static func cellText(
        _ row: some RowValues, at column: Int, settings: RenderSettings,
        _ body: (UnsafeBufferPointer<UInt8>) -> [UInt8]?
    ) -> [UInt8]? {
        guard column < row.count else { return [UInt8]().withUnsafeBufferPointer(body) }
        if settings.columnar.quote {
            var literal = OutputBuffer()
            switch row.type(at: column) {
            case .null: literal.append("NULL")
            case .text: row.withUTF8(at: column) { SQLiteText.appendQuoted(SQLiteText.untilNUL($0), to: &literal) }
            case .blob:
                literal.appendBlobLiteral(row, at: column)
                var bytes = literal.bytes
                bytes[0] = UInt8(ascii: "x")
                return bytes.withUnsafeBufferPointer(body)
            case .integer, .real: SQLiteText.withText(row, at: column) { literal.append($0!) }
            }
            return literal.bytes.withUnsafeBufferPointer(body)
        }
        return SQLiteText.withText(row, at: column) { text in
            if let text { return body(text) }
            var null = settings.nullText
            return null.withUTF8(body)
        }
    }

    /// Adds a cell's first display line; returns the rest of its text, if any.
    @discardableResult
    private mutating func add(_ text: Slice<UnsafeBufferPointer<UInt8>>, column: Int) -> [UInt8]? {
        let (count, rest) = Self.displayLine(
            text, maxWidth: wrapWidth(column), wordWrap: settings.columnar.wordWrap, into: &lines.text)
        lines.ends.append(lines.text.count)
        lines.counts.append(count)
        return rest.map { Array($0) }
    }

    /// Appends the first display line of `text` to `output`, as sqlite3
    /// cuts it; returns its width in characters and the rest of the text
    /// (`nil` when nothing is left).
    static func displayLine(
        _ text: Slice<UnsafeBufferPointer<UInt8>>, maxWidth: Int, wordWrap: Bool, into output: inout [UInt8]
    ) -> (Int, Slice<UnsafeBufferPointer<UInt8>>?) {
        let base = text.startIndex
        let end = text.firstIndex(of: 0) ?? text.endIndex
        func at(_ index: Int) -> UInt8 { base + index < end ? text[base + index] : 0 }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
        func isAlnum(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
        }
        let limit = maxWidth == 0 ? 1_000_000 : maxWidth
        // Fast path: printable ASCII shorter than the limit.
        if end - base < limit, text[base..<end].allSatisfy({ $0 >= 0x20 && $0 < 0x80 }) {
            output.append(contentsOf: text[base..<end])
            return (end - base, nil)
        }
        var i = 0
        var n = 0
        while n < limit {
            let byte = at(i)
            if byte >= 0x20 {
                n += 1
                repeat { i += 1 } while at(i) & 0xC0 == 0x80
            } else if byte == 0x09 {
                repeat { n += 1 } while n & 7 != 0 && n < limit
                i += 1
            } else {
                break
            }
        }
        var k = i
        if n >= limit && wordWrap {
            k = i
            while k > i / 2 && !isSpace(at(k - 1)) { k -= 1 }
            if k <= i / 2 {
                k = i
                while k > i / 2 && !(isAlnum(at(k - 1)) != isAlnum(at(k)) && at(k) & 0xC0 != 0x80) { k -= 1 }
            }
            if k <= i / 2 {
                k = i
            } else {
                i = k
                while at(i) == 0x20 { i += 1 }
            }
        }
        var rest: Slice<UnsafeBufferPointer<UInt8>>?
        if n >= limit && at(i) >= 0x20 {
            rest = text[(base + i)..<end]
        } else if at(i) == 0x0D && at(i + 1) == 0x0A {
            rest = at(i + 2) != 0 ? text[(base + i + 2)..<end] : nil
        } else if at(i) != 0 && at(i + 1) != 0 {
            rest = text[(base + i + 1)..<end]
        }
        // The line itself, tabs expanded.
        i = 0
        n = 0
        while i < k {
            let byte = at(i)
            if byte >= 0x20 {
                n += 1
                repeat {
                    output.append(at(i))
                    i += 1
                } while at(i) & 0xC0 == 0x80
            } else if byte == 0x09 {
                repeat {
                    n += 1
                    output.append(0x20)
                } while n & 7 != 0 && n < limit
                i += 1
            } else {
                break
            }
        }
        return (n, rest)
    }

    mutating func end(into output: inout OutputBuffer) {
        guard rowCount > 0, !columns.isEmpty else { return }
        let columnCount = columns.count
        var widths = (0..<columnCount).map { column in
            abs(column < settings.widths.count ? settings.widths[column] : 0)
        }
        for (index, count) in lines.counts.enumerated() {
            widths[index % columnCount] = max(widths[index % columnCount], count)
        }
        let rightAligned = (0..<columnCount).map { column in
            column < settings.widths.count && settings.widths[column] < 0
        }
        let mode = settings.mode == .qbox ? OutputMode.box : settings.mode
        let box = mode == .box
        func rule(_ left: String, _ middle: String, _ right: String) {
            output.append(left)
            for (index, width) in widths.enumerated() {
                if index > 0 { output.append(middle) }
                output.append(String(repeating: box ? "─" : "-", count: width + 2))
            }
            output.append(right + "\n")
        }
        func cell(_ index: Int, centred: Bool) {
            let column = index % columnCount
            let padding = widths[column] - lines.counts[index]
            let (left, right) =
                centred ? (padding / 2, (padding + 1) / 2) : rightAligned[column] ? (padding, 0) : (0, padding)
            output.append(repeating: 0x20, count: left)
            lines.bytes(index).withUnsafeBufferPointer { output.append($0) }
            output.append(repeating: 0x20, count: right)
        }
        let (start, separator, end) =
            switch mode {
            case .column: ("", "  ", "\n")
            case .box: ("│ ", " │ ", " │\n")
            default: ("| ", " | ", " |\n")
            }
        switch mode {
        case .column:
            if settings.headers {
                for column in 0..<columnCount {
                    cell(column, centred: false)
                    output.append(column == columnCount - 1 ? "\n" : "  ")
                }
                for (column, width) in widths.enumerated() {
                    output.append(repeating: UInt8(ascii: "-"), count: width)
                    output.append(column == columnCount - 1 ? "\n" : "  ")
                }
            }
        case .table, .markdown, .box:
            if mode == .table { rule("+", "+", "+") }
            if box { rule("┌", "┬", "┐") }
            output.append(start)
            for column in 0..<columnCount {
                cell(column, centred: true)
                output.append(column == columnCount - 1 ? end : separator)
            }
            if mode == .table { rule("+", "+", "+") }
            if mode == .markdown { rule("|", "|", "|") }
            if box { rule("├", "┼", "┤") }
        default:
            break
        }
        for line in endsRow.indices {
            output.append(start)
            for column in 0..<columnCount {
                cell((line + 1) * columnCount + column, centred: false)
                output.append(column == columnCount - 1 ? end : separator)
            }
            guard multiLine, endsRow[line], line + 1 < endsRow.count else { continue }
            switch mode {
            case .table: rule("+", "+", "+")
            case .box: rule("├", "┼", "┤")
            case .column: output.append("\n")
            default: break
            }
        }
        if mode == .table { rule("+", "+", "+") }
        if box { rule("└", "┴", "┘") }
    }
}
