import Foundation
import SQLiveEngine

extension Session {
    /// Performs a dot-command; throws what the user should read.
    func perform(_ command: DotCommand, source: Source) throws {
        if try performDiagnostic(command, source: source) { return }
        switch command {
        case .open(let path, let readonly):
            if refuseOpenInSafeMode(path) { return }
            try open(path, readonly: readonly)

        case .watch(let name, let sql, let diff, let replace, let changes, let maxRows):
            try watch(
                name: name, definition: LiveQueryDefinition(sql: sql, maxRows: maxRows),
                delivery: changes ? .changesOnly : diff ? .rowsAndDiff : .rows, replace: replace)

        case .pause(let name):
            let database = try requireDatabase()
            try Blocking.run { try await database.directory.pause(name: name) }
            watches.setPaused(name, true)

        case .resume(let name):
            let database = try requireDatabase()
            try Blocking.run { try await database.directory.resume(name: name) }
            watches.setPaused(name, false)

        case .unwatch(let name):
            let database = try requireDatabase()
            if let name {
                try Blocking.run { try await database.directory.unregister(name: name) }
                watches.remove(name)
            } else {
                try Blocking.run { await database.directory.unregisterAll() }
                watches.remove(nil)
            }

        case .watches:
            try listWatches()

        case .web(let address):
            try serveLivePage(at: address)

        case .webOff:
            stopLivePage()

        case .feed(let tables):
            try feed(tables)

        case .wait(let name, let timeout):
            try wait(for: name, timeout: timeout)

        case .explain(let sql, let bytecode, let advise):
            let database = try requireDatabase()
            if bytecode {
                let program = try Blocking.run { try await database.explainBytecode(sql) }
                var settings = renderSettings
                settings.headers = true
                try sink.write(
                    render(columns: BytecodeInstruction.columns, rows: program.map(\.values), settings: settings))
            } else {
                let explanation = try Blocking.run { try await database.explain(sql, advise: advise) }
                try sink.write(Self.rendered(explanation) + "\n")
            }

        case .timer(let on):
            shell.timer = on

        case .panel(let on):
            try setPanel(on)

        case .mode, .headers, .nullValue, .separator, .width, .show, .explainSetting, .print, .warning:
            try performOutputSetting(command, source: source)

        case .tables(let pattern):
            try listNames(tables: true, pattern: pattern)

        case .schema(let pattern, let noSystemTables):
            try sink.write(schemaText(pattern: pattern, noSystemTables: noSystemTables))

        case .read(let path):
            try read(path: path)

        case .importFile(let path, let table, let format, let skip, let schema, let verbose):
            try importFile(path: path, table: table, format: format, skip: skip, schema: schema, verbose: verbose)

        case .dump(let patterns, let options):
            try DatabaseDump(database: try requireDatabase(), patterns: patterns, sink: sink, options: options).write()

        case .lint(let command, let arguments):
            try lint(command: command, arguments: arguments)

        case .output(let path, let once):
            try redirectOutput(to: path, once: once)

        case .indexes(let pattern):
            try listIndexes(pattern: pattern)

        case .changes(let on):
            shell.changes = on

        case .trace, .shellTrace, .stats, .log, .nonce:
            break  // performDiagnostic

        case .help(let name):
            if let name, let text = DotCommandHelp.overview(matching: name.lowercased()) {
                // sqlite3's `.help PATTERN`: the lines of the commands the glob matches.
                try sink.write(text)
            } else if let name {
                guard let text = DotCommandHelp.help(for: name.lowercased()) else {
                    throw CommandFailure("no such command: .\(name)")
                }
                try sink.write(text)
            } else {
                try sink.write(DotCommandHelp.overview)
            }

        case .quit:
            exitCode = failed && !interactive ? 1 : 0

        case .none:
            break

        case .echo(let on):
            echo = on

        case .bail(let on):
            bail = on

        case .prompt(let main, let continuation):
            if let main { prompts.main = main }
            if let continuation { prompts.continuation = continuation }

        case .system(let words):
            // sqlite3's shell_exec: flushed first, words with a space quoted,
            // the raw status of system(3) printed when not 0.
            sink.flush()
            let command = words.map { $0.contains(" ") ? "\"\($0)\"" : $0 }.joined(separator: " ")
            let status = Glibc.system(command)
            if status != 0 { writeErrorLine("System command returns \(status)") }

        case .timeout(let milliseconds):
            try requireDatabase().setBusyTimeout(milliseconds: milliseconds)

        case .fullSchema:
            try fullSchema()

        case .limits(let name, let value):
            try limits(name: name, value: value)

        case .changeDirectory(let path):
            // As sqlite3: relative paths given later (.open, .read, .output)
            // are read from there.
            guard FileManager.default.changeCurrentDirectoryPath(path) else {
                throw CommandFailure(verbatim: "Cannot change to directory \"\(path)\"")
            }

        case .parameter(let arguments):
            try parameter(arguments)

        case .databases:
            let database = try requireDatabase()
            // sqlive's connection opens the temp database as it starts (its
            // schema decides where a live query reads); sqlite3 lists it
            // once something used it. Listed here once it has a page.
            var pages = ResultCollector()
            try? database.run("PRAGMA temp.page_count", traced: false, consumer: &pages)
            let tempUsed = pages.results.first?.rows.first?.first.map { $0 != .integer(0) } ?? true
            try sink.write(
                database.attachedDatabases().filter { $0.name != "temp" || tempUsed }.map {
                    "\($0.name): \($0.file.isEmpty ? "\"\"" : $0.file) \($0.readonly ? "r/o" : "r/w")\($0.transaction)\n"
                }.joined())

        case .backup(let schema, let path):
            do {
                try requireDatabase().backup(schema: schema, to: path)
            } catch let failure as LiveDatabase.CopyFailure {
                throw CommandFailure(verbatim: failure.message)
            }

        case .restore(let schema, let path):
            do {
                try requireDatabase().restore(schema: schema, from: path)
            } catch let failure as LiveDatabase.CopyFailure {
                throw CommandFailure(verbatim: failure.message)
            }

        case .exit(let code):
            exitCode = code
        }
    }

    /// `.watch`: registers (or redefines) a live query and prints its first result.
    func watch(name: String, definition: LiveQueryDefinition, delivery: LiveQueryDelivery, replace: Bool) throws {
        let database = try requireDatabase()
        let snapshot: LiveQuerySnapshot
        var replaced = false
        if replace && database.directory.handle(named: name) != nil {
            snapshot = try Blocking.run {
                try await database.directory.update(
                    name: name, sql: definition.sql, parameters: definition.parameters,
                    maxRows: .some(definition.maxRows),
                    delivery: delivery)
            }
            replaced = true
        } else {
            do {
                snapshot = try Blocking.run {
                    try await database.directory.register(name: name, definition, delivery: delivery)
                }
            } catch SQLiveError.liveQueryNameTaken {
                throw CommandFailure("a live query named \(name) already exists (use .watch --replace to redefine it)")
            }
        }
        // Print what arrived before, so that the versions stay in order.
        printEvents()
        watches.didRegister(snapshot, replaced: replaced)
        let printer = LiveQueryPrinter(settings: renderSettings)
        // A live query prints on the terminal, whatever `.output` says.
        if panel.isDisplayable {
            // The rows are in the panel: the header line says the command worked.
            try sink.writeTerminal(printer.header(LiveQueryPrinter.registeredHeader(snapshot, replaced: replaced)))
            syncPanel(settings: renderSettings)
        } else {
            try sink.writeTerminal(printer.registered(snapshot, replaced: replaced))
        }
    }

    /// `.lint`: its report on standard output, its usage or error on
    /// standard error; as in sqlite3, neither fails the command.
    private func lint(command: String, arguments: [String]) throws {
        let database = try requireDatabase()
        switch ForeignKeyIndexLint.parse(command: command, arguments: arguments) {
        case .failure(let usage):
            sink.writeError(usage.text)
        case .success(let lint):
            let report = try database.writer.writeWithoutTransaction { db in
                guard let connection = db.sqliteConnection else { throw SQLiveError.closed }
                return lint.run(on: connection)
            }
            try sink.write(report.output)
            if let error = report.error { sink.writeError(error) }
        }
    }

    /// `.panel on|off`: live results pinned at the top of the terminal, or
    /// re-printed above the prompt. Scripts have no panel: there it does nothing.
    private func setPanel(_ on: Bool) throws {
        guard interactive else { return }
        panel.setEnabled(on)
        guard on else { return }
        guard panel.capable else {
            throw CommandFailure(
                "this terminal cannot hold the live panel (it needs TERM set and not dumb, and standard output a terminal)"
            )
        }
        if !panel.isDisplayable {
            try sink.writeTerminal(
                "-- the terminal is too small for the live panel (\(PanelLayout.minimumRows) rows and "
                    + "\(PanelLayout.minimumColumns) columns at least): live queries are re-printed above the "
                    + "prompt until it is larger\n")
        }
    }

    /// `.wait`: returns once the live query printed a change newer than the
    /// last one waited for.
    private func wait(for name: String?, timeout: Duration) throws {
        if let name {
            guard watches.contains(name) else { throw SQLiveError.unknownLiveQuery(name) }
        } else if watches.isEmpty {
            throw CommandFailure("no live query to wait for")
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            printEvents()
            if isFinished { return }
            if watches.takeChangeSinceWait(name) { return }
            if signals.isInterruptRequested { throw CommandFailure("interrupted") }
            let remaining = deadline - .now
            guard remaining > .zero else {
                let seconds = SQLValue.format(real: timeout.milliseconds / 1000)
                throw CommandFailure("timed out: no change of \(name ?? "any live query") within \(seconds) s")
            }
            sink.flush()
            wake.wait(timeout: min(remaining, .milliseconds(250)))
        }
    }

    /// `.explain`'s output: the tree as sqlite3 draws it, its hints after
    /// `⚠`, and the advice, each index with the plan it would give.
    static func rendered(_ explanation: Explanation) -> String {
        var lines = [explanation.plan.rendered]
        lines += explanation.hints.map { "⚠ " + $0.explanation }
        if let advice = explanation.advice {
            if advice.proposals.isEmpty {
                lines.append("-- advice: no index would change this plan")
            }
            for proposal in advice.proposals {
                lines.append("-- advice: \(proposal.sql)")
                lines += proposal.planAfter.rendered.split(separator: "\n").map { "--   " + $0 }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `.feed`: starts (or restarts, for other tables) or stops printing
    /// each commit's changed rows.
    private func feed(_ tables: [String]?) throws {
        feedPump?.cancel()
        feedPump = nil
        guard let tables else { return }
        let database = try requireDatabase()
        guard database.info.path != ":memory:" && !database.info.path.isEmpty else {
            throw CommandFailure("the change feed needs a database file")
        }
        feedPump = events.pumpFeed(database, tables: tables)
    }

    /// `.watches`: one row per live query.
    private func listWatches() throws {
        let database = try requireDatabase()
        let queries = try Blocking.run { await database.directory.list() }
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        let rows: [[SQLValue]] = queries.map { query in
            let state: String =
                if let error = query.error { "error: \(error.description)" } else if query.paused { "paused" } else {
                    "live"
                }
            // Committed rows, or the session's own (temp tables, memory attachments).
            let reads = query.readsSession ? "session" : "committed"
            return [
                .text(query.name), .text(query.tables.joined(separator: ", ")), .integer(Int64(query.version)),
                .integer(Int64(query.refreshes)), query.lastRefresh.map { .text(formatter.string(from: $0)) } ?? .null,
                query.lastRun.map { .real(($0.elapsed.milliseconds * 1000).rounded() / 1000) } ?? .null,
                query.lastRun.map { .text($0.counters.summary) } ?? .null,
                .text(state), .text(reads), .text(query.precision.rawValue), .text(query.definition.sql),
            ]
        }
        var settings = renderSettings
        settings.headers = true
        try sink.write(
            render(
                columns: [
                    "name", "tables", "version", "refreshes", "last_refresh", "last_ms", "cost", "state", "reads",
                    "precision", "sql",
                ], rows: rows,
                settings: settings))
    }

    /// Names in columns, top to bottom then left to right, as sqlite3's `.tables` prints them.
    /// Names in columns down then across, as sqlite3 3.40.1 lays out
    /// `.tables` and `.indexes`: each padded to the longest (its bytes, as
    /// C's `%-*s`), two spaces between, as many columns as fit in `width`
    /// (80 in sqlite3) — the last one padded too.
    static func columnated(_ names: [String], width: Int) -> String {
        guard !names.isEmpty else { return "" }
        let longest = names.map(\.utf8.count).max() ?? 0
        let columns = max(1, width / (longest + 2))
        let rows = (names.count + columns - 1) / columns
        var output = ""
        for row in 0..<rows {
            for index in stride(from: row, to: names.count, by: rows) {
                let name = names[index]
                output += (index < rows ? "" : "  ") + name + String(repeating: " ", count: longest - name.utf8.count)
            }
            output += "\n"
        }
        return output
    }

    /// `.web`: the live page of this session's database and live queries.
    private func serveLivePage(at address: String?) throws {
        if let livePage {
            try sink.write("the live page is at \(livePage.url) (.web off stops it)\n")
            return
        }
        let database = try requireDatabase()
        guard let launch = LivePage.launcher.withLock({ $0 }) else {
            throw CommandFailure("this build of sqlive has no live page")
        }
        let shown = database.info.path.isEmpty ? ":memory:" : database.info.path
        let served = try Blocking.run { await launch(database, shown, address) }
        switch served {
        case .success(let page):
            livePage = page
            try sink.write(page.url + "\n")
        case .failure(let failure):
            throw CommandFailure("cannot serve the live page: \(failure.description)")
        }
    }

    /// Stops the live page, if one is served.
    func stopLivePage() {
        guard let page = livePage else { return }
        livePage = nil
        try? Blocking.run { await page.stop() }
    }
}
