import SQLiveEngine

/// Gathers input lines into commands: a dot-command is one line, SQL goes
/// on until it ends in a complete statement.
///
/// The interactive loop and scripted sessions share it, so a script and a
/// typed session split their input the same way. Lines are bytes
/// (`ScriptText`): a NUL byte, or bytes that are not UTF-8, stay in the
/// statement that holds them, which then refuses to run.
///
/// ```swift
/// var input = InputAccumulator()
/// input.add("SELECT 1,", lineNumber: 1)   // nil: incomplete
/// input.add("2;", lineNumber: 2)          // .sql("SELECT 1,\n2;", line: 1)
/// ```
struct InputAccumulator {
    /// A complete unit of input.
    enum Unit: Hashable {
        case dotCommand(ScriptText, line: Int)
        case sql(ScriptText, line: Int)
    }

    /// Tells whether SQL text ends in a complete statement.
    var isComplete: ([UInt8]) -> Bool = SQLStatementCompleteness.isComplete
    /// The lines of an incomplete statement.
    private(set) var pending: [UInt8] = []
    private var pendingLine = 0

    /// Whether an incomplete statement is waiting for more lines.
    var isEmpty: Bool { pending.isEmpty }

    /// The incomplete statement as text, for completion.
    var pendingText: String { String(decoding: pending, as: UTF8.self) }

    /// Adds a line (without its line break); returns a unit when one is complete.
    mutating func add(_ line: ScriptText, lineNumber: Int) -> Unit? {
        let bytes = line.bytes
        if pending.isEmpty {
            // As in sqlite3: a dot-command starts in the first column (an
            // indented one is SQL), and so does a `#` comment line.
            if bytes.first == UInt8(ascii: ".") { return .dotCommand(line, line: lineNumber) }
            if bytes.first == UInt8(ascii: "#") { return nil }
            if Self.isAllWhitespace(bytes) { return nil }
            pending = bytes
            pendingLine = lineNumber
        } else {
            pending.append(0x0A)
            pending += bytes
        }
        // As in sqlite3 (`line_contains_semicolon`): a statement can only
        // end in a line that holds a semicolon, so the whole text is judged
        // only then — a statement over 40,000 lines is read in linear time.
        guard bytes.contains(UInt8(ascii: ";")), isComplete(pending) else { return nil }
        defer { pending = [] }
        return .sql(ScriptText(bytes: pending), line: pendingLine)
    }

    /// Ends the input: what is left, if anything, runs as it is.
    mutating func finish() -> Unit? {
        defer { pending = [] }
        guard !pending.isEmpty, !Self.isBlank(pending) else { return nil }
        return .sql(ScriptText(bytes: pending), line: pendingLine)
    }

    /// Drops an incomplete statement (Ctrl-C).
    mutating func reset() {
        pending = []
    }

    /// Whether the text holds only whitespace and comments.
    static func isBlank(_ text: String) -> Bool {
        isBlank(Array(text.utf8))
    }

    /// Whether the bytes hold only whitespace and comments.
    static func isBlank(_ bytes: [UInt8]) -> Bool {
        SQLScript.blankPrefixLength(bytes[...]) == bytes.count
    }

    /// Whether a line that would start a statement holds only whitespace and
    /// complete comments, as the sqlite3 shell judges it (`_all_whitespace`):
    /// a `/*` comment left open goes on over the next lines, so the line
    /// starts the statement (a migration that opens with a comment over
    /// several lines loses nothing).
    static func isAllWhitespace(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                index += 1
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                index += 2
                while index < bytes.count,
                    !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count
                        && bytes[index + 1] == UInt8(ascii: "/"))
                {
                    index += 1
                }
                if index >= bytes.count { return false }
                index += 2
            } else if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
                return true
            } else {
                return false
            }
        }
        return true
    }
}
