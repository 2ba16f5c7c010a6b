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
            if bytes.drop(while: { $0 == 0x20 || $0 == 0x09 }).first == UInt8(ascii: ".") {
                return .dotCommand(line, line: lineNumber)
            }
            if Self.isBlank(bytes) { return nil }
            pending = bytes
            pendingLine = lineNumber
        } else {
            pending.append(0x0A)
            pending += bytes
        }
        guard isComplete(pending) else { return nil }
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
}
