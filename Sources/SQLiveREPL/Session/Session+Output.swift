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
            if path.hasPrefix("|") {
                // What was written comes first (the command writes to the same output).
                sink.flush()
                try sink.redirectResults(toCommand: String(path.dropFirst()))
            } else {
                try sink.redirectResults(toFile: path)
            }
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
        try listNames(tables: false, pattern: pattern)
    }

    /// `.tables [PATTERN]` (tables and views, SQLite's own left out) or
    /// `.indexes [PATTERN]` (of the tables matching): of every database,
    /// those of `main` by name, the others' as `schema.name`, in columns,
    /// with sqlite3's query and layout.
    func listNames(tables: Bool, pattern: String?) throws {
        let database = try requireDatabase()
        var schemas = ResultCollector()
        try database.run("SELECT name FROM pragma_database_list", traced: false, consumer: &schemas)
        let selects = (schemas.results.first?.rows ?? []).compactMap { row -> String? in
            guard case .text(let schema) = row[0] else { return nil }
            let name = schema.lowercased() == "main" ? "name" : DumpText.quotedLiteral(schema) + " || '.' || name"
            return "SELECT \(name) FROM \(SQLToken.doubleQuoted(schema)).sqlite_schema"
                + (tables
                    ? " WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' AND name LIKE ?1"
                    : " WHERE type = 'index' AND tbl_name LIKE ?1")
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
        try sink.write(Self.columnated(list, width: 80))
    }

    // MARK: - Output

    /// Writes to the terminal (standard output, whatever `.output` says):
    /// live queries' prints, the timer, the banner. A closed output ends
    /// the session.
    func write(_ text: String) {
        do {
            try sink.writeTerminal(text)
        } catch {
            stopped = true
        }
    }

    /// Reports an error on standard error: `Error: near line 3: ...` in scripts.
    func reportError(_ message: String, line: Int? = nil, source: Source = Source()) {
        var text = "Error: "
        if !interactive || source.name != nil {
            if let name = source.name { text += name + " " }
            if let line { text += "near line \(line): " }
        }
        text += message
        sink.writeError(colourError(text) + "\n")
    }

    /// Writes one line of an error, as it is, on standard error.
    func writeErrorLine(_ text: String) {
        sink.writeError(colourError(text) + "\n")
    }

    private func colourError(_ text: String) -> String {
        colour && (colourForced || isatty(2) != 0) ? ANSI.red + text + ANSI.reset : text
    }

    /// Prints the live-query and trace events that arrived, and brings the
    /// live panel up to date.
    ///
    /// Changes go to the panel when it is shown (or can be), else they are
    /// re-printed above the prompt; other events always print there.
    ///
    /// - parameter around: runs its body with readline's line cleared, when
    ///   something is written under the panel or the panel's height
    ///   changes (a redraw of the panel alone leaves the line as it is).
    func printEvents(around: (() -> Void) -> Void = { $0() }) {
        wake.drainIfPosted()
        let items = events.takeAll()
        let settings = renderSettings
        let printer = LiveQueryPrinter(settings: settings)
        let toPanel = panel.isDisplayable
        // What goes above the prompt, in order: standard output or error.
        var pieces: [(error: Bool, text: String)] = []
        func add(_ text: String, error: Bool = false) {
            guard !text.isEmpty else { return }
            if !error, let last = pieces.last, !last.error {
                pieces[pieces.count - 1].text += text
            } else {
                pieces.append((error, text))
            }
        }
        for item in items {
            switch item {
            case .live(.changed(let change)):
                guard watches.take(change, shown: !toPanel) else { continue }
                if !toPanel { add(printer.changed(change)) }
            case .live(.failed(let name, let error)):
                guard watches.fail(name, message: error.description) else { continue }
                if !toPanel { add(printer.failed(name: name, error: error), error: true) }
            case .live(.databaseFileChanged(let change)):
                add("-- \(change.message)\n", error: true)
            case .feed(let commit):
                add(FeedPrinter.text(commit))
            case .trace(let event):
                guard shell.trace != .off else { continue }
                add(
                    TraceLine.format(
                        sql: event.sql, elapsed: event.elapsed, rows: event.rows, counters: event.counters,
                        live: event.origin == .liveQuery))
            }
        }
        let body = {
            for piece in pieces {
                if piece.error { self.sink.writeError(piece.text) } else { self.write(piece.text) }
            }
            self.syncPanel(settings: settings)
        }
        if pieces.isEmpty && !panel.needsLayoutChange(settings: settings) {
            body()
        } else {
            around(body)
        }
    }

    /// Brings the panel up to date; when it was just taken away, prints
    /// the live queries' latest state above the prompt once.
    func syncPanel(settings: RenderSettings) {
        let left = panel.sync(settings: settings)
        guard !left.isEmpty else { return }
        write(Self.printed(left, printer: LiveQueryPrinter(settings: settings)))
    }

    /// The latest state of live queries, as re-prints show it.
    static func printed(_ entries: [PanelEntry], printer: LiveQueryPrinter) -> String {
        var output = ""
        for entry in entries {
            if let error = entry.error {
                output += printer.colour(ANSI.red, "-- \(entry.name): error: \(error)") + "\n"
            } else {
                var copy = printer.settings
                copy.headers = true
                output += printer.header("-- \(entry.name) v\(entry.version) (\(entry.detail))")
                output += render(
                    columns: entry.result.columns, styledRows: printer.styledRows(entry.result, previous: nil),
                    settings: copy)
            }
        }
        return output
    }

    /// The session gives the terminal back (at exit): the panel goes away
    /// and the scroll region is the whole screen again.
    func releaseTerminal() {
        panel.release()
        panel.sync(settings: renderSettings)
    }

    /// Whether any command failed.
    var hasFailed: Bool { failed }

    /// Ends a scripted session's output and tells its exit status: a file
    /// `.output` or `.once` named is closed (renamed into place when whole),
    /// and a write that failed (a full disk) fails the session, whatever
    /// `.quit` or `.exit 0` said, so that a cron job never takes a truncated
    /// backup for a good one.
    func finishedStatus() -> Int32 {
        sink.resetResults()
        if let signal = signals.termination { return 128 + signal }
        if sink.failedWrites > 0 { return max(exitCode ?? 1, 1) }
        return exitCode ?? (hasFailed ? 1 : 0)
    }

    /// Whether events are waiting to be printed.
    var hasPendingEvents: Bool { !events.isEmpty }
}
