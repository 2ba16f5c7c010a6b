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

/// A failed statement's message as the sqlite3 shell (3.40.1) words it:
/// `Parse error near line 4: no such column: nope`, with the statement and a
/// caret under the error on the next two lines when SQLite locates it.
struct ShellErrorText: Equatable {
    /// `Parse error` (prepare), `Runtime error` (step), or `Error`.
    var kind: String
    /// The message, its result code when above 1 (`(19)`), and the context.
    var tail: String
    /// What the shell calls the phase in `-cmd` and argument errors
    /// (`in prepare, `, `stepping, `), or nothing.
    var phasePrefix: String

    init(_ failure: SQLiteFailure, script: String) {
        var tail = failure.message
        switch failure.phase {
        case .prepare:
            kind = "Parse error"
            phasePrefix = "in prepare, "
        case .step:
            kind = "Runtime error"
            phasePrefix = "stepping, "
        case nil:
            kind = "Error"
            phasePrefix = ""
        }
        if failure.phase != nil && failure.code > 1 { tail += " (\(failure.code))" }
        if failure.phase == .prepare, let start = failure.statementOffset, let offset = failure.offset {
            tail += Self.context(Array(script.utf8), statementOffset: start, errorOffset: offset)
        }
        self.tail = tail
    }

    /// The line a script's error prints: `KIND near line N: TAIL`, or
    /// `KIND: TAIL` when typed in an interactive session.
    func scriptLine(line: Int?) -> String {
        if let line { return "\(kind) near line \(line): \(tail)" }
        return "\(kind): \(tail)"
    }

    /// The line an error of a `-cmd` option or of SQL given on the command
    /// line prints: `Error: in prepare, TAIL`.
    var argumentLine: String { "Error: \(phasePrefix)\(tail)" }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// The statement around the error, at most 78 bytes of it, and a caret
    /// under the error: the shell's `shell_error_context`, byte for byte.
    static func context(_ script: [UInt8], statementOffset: Int, errorOffset: Int) -> String {
        var start = min(max(statementOffset, 0), script.count)
        while start < script.count && isSpace(script[start]) { start += 1 }
        var offset = errorOffset - start
        guard offset >= 0 else { return "" }
        while offset > 50 && start < script.count {
            offset -= 1
            start += 1
            while start < script.count && script[start] & 0xC0 == 0x80 {
                start += 1
                offset -= 1
            }
        }
        var length = script.count - start
        if let nul = script[start...].firstIndex(of: 0) { length = nul - start }
        if length > 78 {
            length = 78
            while length > 0 && start + length < script.count && script[start + length] & 0xC0 == 0x80 {
                length -= 1
            }
        }
        let code = script[start..<(start + length)].map { isSpace($0) ? UInt8(ascii: " ") : $0 }
        let text = String(decoding: code, as: UTF8.self)
        if offset < 25 {
            return "\n  \(text)\n  " + String(repeating: " ", count: offset) + "^--- error here"
        }
        return "\n  \(text)\n  " + String(repeating: " ", count: offset - 14) + "error here ---^"
    }
}
