import SQLiveEngine

/// The rows of a CSV or TSV file for the engine's bulk insert, made as the
/// sqlite3 shell's `.import` makes them.
///
/// Every field is bound as text. A row with too few fields is completed
/// with NULLs, one with too many loses the extras; both say so, with the
/// file and the line where the row starts, as sqlite3 says it:
///
/// ```text
/// games.csv:7: expected 3 columns but found 2 - filling the rest with NULL
/// games.csv:9: expected 3 columns but found 4 - extras ignored
/// ```
///
/// When the table does not exist, the first row names its columns
/// (`ImportedTable`).
struct DelimitedTextRows: RowSource {
    /// Reading stopped: Ctrl-C, or the file cannot be read.
    struct Stopped: Error {
        var message: String
    }

    private var reader: DelimitedTextReader
    /// The file's name, as the user wrote it, for messages.
    let file: String
    /// Prints a warning (on standard error).
    private let warn: (String) -> Void
    /// Prints what the sqlite3 shell prints on standard output (renamed columns).
    private let inform: (String) -> Void
    /// Why to stop (Ctrl-C was pressed, the file cannot be read), if so;
    /// asked every few thousand rows and at the end of the input.
    private let shouldStop: () -> String?
    /// The line where the last row started.
    private(set) var rowLine = 1
    private var rows = 0
    /// The rows SQLite refused, by the line where each started.
    private(set) var failures: [(line: Int, message: String)] = []

    init(
        reader: DelimitedTextReader, file: String, warn: @escaping (String) -> Void,
        inform: @escaping (String) -> Void, shouldStop: @escaping () -> String? = { nil }
    ) {
        self.reader = reader
        self.file = file
        self.warn = warn
        self.inform = inform
        self.shouldStop = shouldStop
    }

    /// Skips the first `count` rows, as `--skip` does.
    mutating func skip(rows count: Int) {
        for _ in 0..<max(0, count) {
            while reader.readField() && reader.terminator == .column {}
        }
    }

    mutating func createTableStatement(quotedName: String) throws -> String? {
        var header: [String] = []
        while reader.readField() {
            header.append(String(decoding: reader.field, as: UTF8.self))
            if reader.terminator != .column { break }
        }
        if let reason = shouldStop() { throw Stopped(message: reason) }
        guard !header.isEmpty else { throw Stopped(message: "\(file): empty file") }
        let table = ImportedTable(header: header)
        if let message = table.renameMessage(file: file) { inform(message) }
        return table.createStatement(quotedName: quotedName)
    }

    mutating func next(into row: inout RowBinding) throws -> Bool {
        while true {
            if let more = try nextRow(into: &row) { return more }
        }
    }

    /// The next row; `nil` for a row skipped (sqlite3's ASCII reader skips
    /// a row whose first field is empty).
    private mutating func nextRow(into row: inout RowBinding) throws -> Bool? {
        // As the sqlite3 shell's loop: a row follows unless the last one ended the input.
        guard reader.terminator != .end else { return try end() }
        rows += 1
        if rows & 0xFFF == 0, let reason = shouldStop() { throw Stopped(message: reason) }
        rowLine = reader.line
        let columns = row.columnCount
        var index = 0
        while index < columns {
            let read = reader.readField()
            if !read && index == 0 { return try end() }
            if !reader.quoting && index == 0 && reader.field.isEmpty { return nil }
            if read {
                reader.field.withUnsafeBytes { row.bindText($0, at: index) }
            }
            if index < columns - 1 && reader.terminator != .column {
                warn(
                    "\(file):\(rowLine): expected \(columns) columns but found \(index + 1) - filling the rest with NULL\n"
                )
                // The columns not bound are NULL.
                index = columns + 1
                break
            }
            index += 1
        }
        if reader.terminator == .column {
            repeat {
                reader.readField()
                index += 1
            } while reader.terminator == .column
            warn("\(file):\(rowLine): expected \(columns) columns but found \(index) - extras ignored\n")
        }
        return true
    }

    /// The input ended: no row is left, unless reading it failed.
    private func end() throws -> Bool {
        if let reason = shouldStop() { throw Stopped(message: reason) }
        return false
    }

    mutating func rowDidFail(_ failure: SQLiteFailure) {
        warn("\(file):\(rowLine): INSERT failed: \(failure.message)\n")
        failures.append((rowLine, failure.message))
    }
}
