import Foundation
import SQLiveEngine

extension Session {
    /// `.import`: loads a CSV or TSV file into a table, in one transaction.
    ///
    /// Warnings (rows with too few or too many fields, malformed quotes,
    /// rows SQLite refused) go to standard error as `FILE:LINE: ...`, as
    /// sqlite3 prints them; the command fails when a row was refused.
    func importFile(
        path: String, table: String, format: DotCommand.ImportFormat?, skip: Int, schema: String?
    ) throws {
        let database = try requireDatabase()
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CommandFailure("cannot open \"\(path)\"") }
        defer { Glibc.close(descriptor) }
        let separator: UInt8 = (format ?? (shell.columnSeparator == "\t" ? .tsv : .csv)) == .tsv ? 0x09 : UInt8(ascii: ",")
        let sink = sink
        var readError: Int32 = 0
        let reader = DelimitedTextReader(
            separator: separator,
            fill: { buffer in
                while true {
                    let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    if count < 0 { readError = errno }
                    return max(count, 0)
                }
            },
            warn: { warning in sink.writeError("\(path):\(warning.line): \(warning.message)\n") })
        let interactive = interactive
        let signals = signals
        var rows = DelimitedTextRows(
            reader: reader, file: path, warn: { sink.writeError($0) },
            inform: { message in
                // sqlite3 tells it on standard output when interactive, else on standard error.
                if interactive {
                    do { try sink.writeTerminal(message) } catch { /* Standard output is closed. */  }
                } else {
                    sink.writeError(message)
                }
            },
            shouldStop: {
                if readError != 0 { return "cannot read \"\(path)\": \(String(cString: strerror(readError)))" }
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
