import SQLiveEngine

extension Session {
    /// The output settings' dot-commands, as the sqlite3 3.40.1 shell
    /// performs them.
    func performOutputSetting(_ command: DotCommand, source: Source) throws {
        switch command {
        case .warning(let text, let then):
            sink.writeError(text + "\n")
            try perform(then, source: source)

        case .mode(let request):
            if let mode = request.mode {
                shell.setMode(mode, table: request.table, options: request.options)
                return
            }
            // sqlite3 prints the mode, then sets it again (its separators too).
            try sink.write("current output mode: \(shell.modeDescription)\n")
            if shell.modeName == "explain" {
                throw CommandFailure("mode should be one of: \(DotCommand.modeNames)")
            }
            shell.setMode(shell.mode, table: request.table, options: request.options)

        case .headers(let on):
            shell.headers = on ? 1 : 0
            shell.headersSet = true

        case .nullValue(let text):
            shell.nullText = SQLiteText.limited(text)

        case .separator(let column, let row, let extra):
            shell.columnSeparator = SQLiteText.limited(column)
            if let row { shell.rowSeparator = SQLiteText.limited(row) }
            if extra { throw CommandFailure("Usage: .separator COL ?ROW?") }

        case .width(let widths):
            shell.widths = widths

        case .show:
            try sink.write(shell.show(output: sink.resultsFile, filename: databaseName))

        case .explainSetting(let setting):
            shell.setExplain(setting)

        case .print(let text):
            try sink.write(text + "\n")

        default:
            break
        }
    }

    /// The database's name as `.show` prints it: as it was given to
    /// `.open` or on the command line (`:memory:` for none).
    var databaseName: String {
        database?.info.path ?? ""
    }
}
