import Foundation
import SQLiveEngine

extension Session {
    /// `.output` and `.once`: results go to a file, or back to standard output.
    func redirectOutput(to path: String?, once: Bool) throws {
        onceCountdown = nil
        guard let path else {
            sink.resetResults()
            return
        }
        do {
            try sink.redirectResults(toFile: path)
        } catch {
            sink.resetResults()
            throw CommandFailure(error.message)
        }
        // The `.once` command itself ends first.
        if once { onceCountdown = 2 }
    }

    /// After each command: results written so far reach their file, and
    /// after the command that followed `.once`, results go back to standard output.
    func outputCommandDidEnd() {
        guard let remaining = onceCountdown else {
            if sink.resultsFile != nil { sink.flush() }
            return
        }
        if remaining <= 1 {
            onceCountdown = nil
            sink.resetResults()
        } else {
            onceCountdown = remaining - 1
            sink.flush()
        }
    }

    /// `.changes on`: `changes: N   total_changes: M`, as the sqlite3 shell prints it after each SQL command.
    func printChangeCounts(line: Int, source: Source) {
        guard let database else { return }
        do {
            let counts = try database.changeCounts()
            try sink.write("changes: \(counts.changes)   total_changes: \(counts.totalChanges)\n")
        } catch is OutputSink.Closed {
            stopped = true
        } catch {
            reportError("\(error)", line: line, source: source)
        }
    }

    /// `.indexes [PATTERN]`: the names of the indexes on the tables matching
    /// the LIKE pattern, of every attached database, in columns, as sqlite3
    /// lists them.
    func listIndexes(pattern: String?) throws {
        let database = try requireDatabase()
        var schemas = ResultCollector()
        try database.run("SELECT name FROM pragma_database_list", traced: false, consumer: &schemas)
        let selects = (schemas.results.first?.rows ?? []).compactMap { row -> String? in
            guard case .text(let schema) = row[0] else { return nil }
            let name = schema.lowercased() == "main" ? "name" : DumpText.quotedLiteral(schema) + " || '.' || name"
            return "SELECT \(name) FROM \(SQLToken.doubleQuoted(schema)).sqlite_schema"
                + " WHERE type = 'index' AND tbl_name LIKE ?1"
        }
        guard !selects.isEmpty else { return }
        var names = ResultCollector()
        try database.run(
            selects.joined(separator: " UNION ALL ") + " ORDER BY 1", parameters: .positional([.text(pattern ?? "%")]),
            traced: false, consumer: &names)
        let list = (names.results.first?.rows ?? []).compactMap { row -> String? in
            if case .text(let name) = row[0] { return name }
            return nil
        }
        try sink.write(Self.columnated(list, width: Terminal.width() ?? 80))
    }
}
