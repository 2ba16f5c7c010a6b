/// The escape sequences that put the panel on the screen, move the rows
/// under it and take it away. Pure functions of the panel's heights and the
/// terminal's rows.
///
/// The panel holds rows `1...height` (its last row a rule); the terminal's
/// scroll region (DECSTBM, `ESC [ top ; bottom r`) is the rows under it, so
/// the REPL's output, readline's line and completion lists scroll there
/// while the panel stays. The panel is drawn with the cursor saved and
/// restored (`ESC 7`, `ESC 8`) and absolute positions outside the region,
/// so readline's idea of where its cursor is stays true.
///
/// Each sequence that changes the height keeps the lines on the screen:
/// making room at the top pushes the rows down (insert lines, `ESC [ n L`)
/// after making sure there are as many blank rows under the cursor (index,
/// `ESC D`, scrolls the region when the cursor is at its bottom, and unlike
/// a line feed is not turned into CR LF by the terminal driver); taking
/// rows away pulls them up (delete lines, `ESC [ n M`). The cursor follows
/// its line, and its column is kept. They assume that nothing is written
/// under the cursor, which holds for a REPL whose line being typed was
/// cleared first.
enum PanelScreen {
    static let saveCursor = "\u{1B}7"
    static let restoreCursor = "\u{1B}8"
    static let resetAttributes = "\u{1B}[0m"
    static let eraseLineEnd = "\u{1B}[K"

    /// Moves the cursor to a row and column, both from 1.
    static func move(row: Int, column: Int = 1) -> String {
        "\u{1B}[\(row);\(column)H"
    }

    /// Sets the scroll region to the rows under a panel of `height` (the
    /// whole screen for 0), keeping the cursor where it is.
    static func region(under height: Int, rows: Int) -> String {
        let region = height > 0 ? "\u{1B}[\(height + 1);\(rows)r" : "\u{1B}[r"
        return saveCursor + region + restoreCursor
    }

    /// Makes `count` blank rows at the top of the region that starts at
    /// `top`, pushing its rows (and the cursor's) down.
    private static func insertRows(_ count: Int, at top: Int) -> String {
        guard count > 0 else { return "" }
        return String(repeating: "\u{1B}D", count: count) + "\u{1B}[\(count)A" + saveCursor + move(row: top)
            + "\u{1B}[\(count)L" + restoreCursor + "\u{1B}[\(count)B"
    }

    /// Shows a panel of `height` rows on a screen without one.
    static func show(height: Int, rows: Int) -> String {
        insertRows(height, at: 1) + region(under: height, rows: rows)
    }

    /// Makes the panel taller.
    static func grow(from old: Int, to new: Int, rows: Int) -> String {
        insertRows(new - old, at: old + 1) + region(under: new, rows: rows)
    }

    /// Makes the panel shorter: the rows under it move up.
    static func shrink(from old: Int, to new: Int, rows: Int) -> String {
        let count = old - new
        guard count > 0 else { return "" }
        return saveCursor + "\u{1B}[\(new + 1);\(rows)r" + move(row: new + 1) + "\u{1B}[\(count)M" + restoreCursor
            + "\u{1B}[\(count)A"
    }

    /// Takes the panel away: the scroll region is the whole screen again,
    /// and the rows under the panel move up into its place.
    static func hide(height: Int) -> String {
        guard height > 0 else { return "" }
        return saveCursor + "\u{1B}[r" + move(row: 1) + "\u{1B}[\(height)M" + restoreCursor + "\u{1B}[\(height)A"
    }

    /// After the terminal was resized (which moves and rewraps rows in ways
    /// each terminal decides): the whole screen is scrolled into the
    /// terminal's history, so no piece of the old panel stays in view, and
    /// the cursor goes to the first row under a panel of `height` (0: none).
    static func restart(height: Int, rows: Int) -> String {
        "\u{1B}[r" + move(row: rows) + String(repeating: "\u{1B}D", count: rows) + move(row: height + 1)
            + region(under: height, rows: rows)
    }

    /// Draws panel rows: `lines` maps a row (from 1) to its text, which
    /// must fit the `width`. The rest of each row is cleared (unless the
    /// text fills it: erasing then would take its last character).
    static func draw(_ lines: [(row: Int, text: String)], width: Int) -> String {
        guard !lines.isEmpty else { return "" }
        var output = saveCursor
        for (row, text) in lines {
            output += move(row: row) + text + resetAttributes
            if TerminalText.width(text) < width { output += eraseLineEnd }
        }
        return output + restoreCursor
    }

    /// Ctrl-L with a panel: clears the rows under it and puts the cursor
    /// on the first of them (readline then redraws its line there).
    static func clearUnder(height: Int) -> String {
        move(row: height + 1) + "\u{1B}[J"
    }
}
