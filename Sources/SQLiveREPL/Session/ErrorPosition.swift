import SQLiveEngine

/// Where a failed statement's error is, for the messages that name its
/// line and the caret an interactive session draws under it.
enum ErrorPosition {
    /// The line of SQL where an error is, with a caret under it, as sqlite3 shows it:
    ///
    /// ```text
    ///   SELEC 1;
    ///   ^--- error here
    /// ```
    static func pointer(at offset: Int, in sql: String) -> String? {
        let utf8 = Array(sql.utf8)
        guard offset >= 0, offset <= utf8.count else { return nil }
        let lineStart = utf8[..<offset].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let lineEnd = utf8[offset...].firstIndex(of: 0x0A) ?? utf8.count
        let line = String(decoding: utf8[lineStart..<lineEnd], as: UTF8.self)
        let before = String(decoding: utf8[lineStart..<offset], as: UTF8.self)
        let column = CellText.width(before.replacingOccurrences(of: "\t", with: " "))
        return "  " + line + "\n  " + String(repeating: " ", count: column) + "^--- error here\n"
    }

    /// The line of the script where a failure happened: where SQLite
    /// located it, or else where the failing statement starts.
    static func line(of failure: SQLiteFailure, in sql: String, current: StatementHeader?, startLine: Int) -> Int {
        let utf8 = Array(sql.utf8)
        var offset: Int?
        if let errorOffset = failure.offset, errorOffset <= utf8.count {
            offset = errorOffset
        } else if let current, current.index == failure.statementIndex, current.belongs(to: sql),
            current.range.upperBound <= utf8.count
        {
            // Where the statement's own text starts, after blanks and comments.
            offset = current.range.lowerBound + SQLScript.blankPrefixLength(utf8[current.range])
        }
        guard let offset else {
            // The first non-blank line of the input.
            let leading = sql.prefix { $0.isWhitespace }
            return startLine + leading.filter { $0 == "\n" }.count
        }
        return startLine + utf8[..<offset].filter { $0 == 0x0A }.count
    }
}
