import Foundation
import SQLiveEngine

extension Session {
    /// `.import`: loads a file, or the output of a command (`|COMMAND`),
    /// into a table, in one transaction.
    ///
    /// The separators are sqlite3's: `--csv` (`,` and LF), `--ascii` (0x1F
    /// and 0x1E, no quoting), sqlive's `--tsv`, or else the output mode's
    /// (`.separator`, `.mode`: one byte each; CSV's CRLF is read as LF).
    /// Warnings (rows with too few or too many fields, malformed quotes,
    /// rows SQLite refused) go to standard error as `FILE:LINE: ...`, as
    /// sqlite3 prints them; the command fails when a row was refused.
    func importFile(
        path: String, table: String, format: DotCommand.ImportFormat?, skip: Int, schema: String?, verbose: Int = 0
    ) throws {
        let database = try requireDatabase()
        var columnSeparator: UInt8
        var rowSeparator = UInt8(ascii: "\n")
        var quoting = true
        switch format {
        case .csv: columnSeparator = UInt8(ascii: ",")
        case .tsv: columnSeparator = 0x09
        case .ascii:
            (columnSeparator, rowSeparator, quoting) = (0x1F, 0x1E, false)
        case nil:
            let column = Array(shell.columnSeparator.utf8)
            var row = Array(shell.rowSeparator.utf8)
            guard !column.isEmpty else { throw CommandFailure("non-null column separator required for import") }
            guard column.count == 1 else {
                throw CommandFailure("multi-character column separators not allowed for import")
            }
            guard !row.isEmpty else { throw CommandFailure("non-null row separator required for import") }
            if shell.mode == .csv && row == Array("\r\n".utf8) { row = [0x0A] }
            guard row.count == 1 else { throw CommandFailure("multi-character row separators not allowed for import") }
            (columnSeparator, rowSeparator, quoting) = (column[0], row[0], shell.mode != .ascii)
        }
        let input = try ImportInput(path: path)
        defer { input.close() }
        let descriptor = input.descriptor
        let shownName = input.name
        if verbose >= 2 || (verbose >= 1 && format == nil) {
            try sink.write(
                "Column separator \(SQLiteText.cString(String(decoding: [columnSeparator], as: UTF8.self))), "
                    + "row separator \(SQLiteText.cString(String(decoding: [rowSeparator], as: UTF8.self)))\n")
        }
        let sink = sink
        var readError: Int32 = 0
        let reader = DelimitedTextReader(
            separator: columnSeparator, rowSeparator: rowSeparator, quoting: quoting,
            fill: { buffer in
                while true {
                    let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    if count < 0 { readError = errno }
                    return max(count, 0)
                }
            },
            warn: { warning in sink.writeError("\(shownName):\(warning.line): \(warning.message)\n") })
        let interactive = interactive
        let signals = signals
        var rows = DelimitedTextRows(
            reader: reader, file: shownName, warn: { sink.writeError($0) },
            inform: { message in
                // sqlite3 tells it on standard output when interactive, else on standard error.
                if interactive {
                    do { try sink.writeTerminal(message) } catch { /* Standard output is closed. */  }
                } else {
                    sink.writeError(message)
                }
            },
            shouldStop: {
                if readError != 0 { return "cannot read \"\(shownName)\": \(String(cString: strerror(readError)))" }
                return signals.isInterruptRequested ? "interrupted" : nil
            })
        rows.skip(rows: skip)
        let insertion: RowInsertion
        do {
            insertion = try database.insertRows(into: table, schema: schema, from: &rows)
        } catch let stopped as DelimitedTextRows.Stopped {
            throw CommandFailure(stopped.message)
        }
        if insertion.createdTable { completion.invalidate() }
        if insertion.failed > 0 {
            let rowsText = insertion.failed == 1 ? "1 row" : "\(insertion.failed) rows"
            throw CommandFailure("\(rowsText) of \(path) could not be inserted into \(table)")
        }
    }
}

/// What `.import` reads: a file, or the standard output of a command when
/// the name starts with `|` (sqlite3 calls it `<pipe>` in its warnings).
private struct ImportInput {
    let descriptor: Int32
    let name: String
    private let pipe: UnsafeMutablePointer<FILE>?

    init(path: String) throws {
        if path.hasPrefix("|") {
            guard let pipe = popen(String(path.dropFirst()), "r") else {
                throw CommandFailure("cannot open \"\(path)\"")
            }
            self.pipe = pipe
            descriptor = fileno(pipe)
            name = "<pipe>"
        } else {
            descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw CommandFailure("cannot open \"\(path)\"") }
            pipe = nil
            name = path
        }
    }

    func close() {
        if let pipe {
            pclose(pipe)
        } else {
            Glibc.close(descriptor)
        }
    }
}
