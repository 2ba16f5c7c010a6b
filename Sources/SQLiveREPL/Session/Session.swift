import Foundation
import SQLiveEngine
import SQLiveLocks

/// The command interpreter shared by interactive and scripted sessions.
///
/// A session runs on one thread of its own (never Swift concurrency's
/// pool): SQL runs there synchronously, streaming to the output, and async
/// engine calls are waited for there. Live-query events arrive on other
/// threads into an `EventQueue` and are printed by this thread when it is
/// free, so output never interleaves.
final class Session {
    /// Where a command came from, for error messages.
    struct Source {
        /// A script file's name, for `.read` (`nil` for the main input).
        var name: String?
    }

    let interactive: Bool
    /// `-bail` or `.bail on`: a script stops at its first error.
    var bail: Bool
    /// `-echo` or `.echo on`: each command is printed before it runs.
    var echo = false
    /// `.prompt`: the main and continuation prompts of an interactive session.
    var prompts = (main: "sqlive> ", continuation: "   ...> ")
    let sink: OutputSink
    let wake: WakePipe
    let signals: SignalState
    let events: EventQueue
    /// Whether colour may be used on standard output and standard error.
    let colour: Bool
    /// Whether colour was forced on (`SQLIVE_COLOR=always`): standard error
    /// is coloured even when it is not a terminal.
    let colourForced: Bool
    /// The live panel (interactive sessions on a terminal; otherwise never shown).
    let panel: LivePanel

    // Mutable State: only touched on the session thread.
    /// What the dot-commands set: how results print, what prints beside them.
    var shell: ShellSettings
    /// Set by `.once`: the commands left before results go back to
    /// standard output (the `.once` itself counts, as in sqlite3).
    var onceCountdown: Int?
    private(set) var database: LiveDatabase?
    private var pumps: [Task<Void, Never>] = []
    /// The schema watch completion reads (`SchemaGeneration`), started at
    /// the first completion: a script, which never completes, keeps no
    /// live query of its own (its `.trace` shows only its statements).
    private var completionWatch: Task<Void, Never>?
    /// Moves the change feed's commits to `events` while `.feed` is on.
    var feedPump: Task<Void, Never>?
    /// The live page serving this session (`.web`), stopped with the database.
    var livePage: (any LivePageServer)?
    /// The live queries watched: how far each was printed and waited for,
    /// and what the panel shows of it (the session's one table of them).
    var watches: WatchTable { panel.watches }
    /// The live-query options every database the session opens gets
    /// (`--refresh-budget`).
    var liveQueryOptions = LiveQueryOptions()
    /// Whether any command failed.
    var failed = false
    /// The database file this session created when it opened it, and
    /// whether a command has used the database since (`closeDatabase`).
    var createdFile: String?
    var usedDatabase = false
    /// SQLite's primary result code of the last SQL statement that failed
    /// (`SQLITE_CONSTRAINT`, 19; `SQLITE_READONLY`, 8): the exit status of
    /// SQL given on the command line that fails, as sqlite3's.
    var lastFailureCode: Int32?
    /// Set by `.quit` and `.exit`: the session ends with this code.
    var exitCode: Int32?
    /// Set when the session must stop (bail, closed output).
    var stopped = false
    var readDepth = 0
    var runDepth = 0
    /// How SQL errors are worded: as in a script, or as for SQL given on
    /// the command line and `-cmd` (sqlite3's `Error: in prepare, …`).
    var errorStyle = ErrorStyle.script
    enum ErrorStyle {
        case script, argument
    }
    /// A script's consecutive SQL commands that wait to run together
    /// (`submit`).
    var pendingSQL: [PendingSQL] = []
    /// The schema completion offers, read again at most once a second.
    let completion = CompletionCache(generation: SchemaGeneration())
    /// `.trace` (sqlite3's form), `.log` and safe mode.
    let diagnostics = ShellDiagnostics()
    /// The line of the dot-command running (safe mode's messages name it).
    var commandLine = 0

    init(interactive: Bool, mode: OutputMode?, bail: Bool) {
        self.interactive = interactive
        self.bail = bail
        shell = ShellSettings(mode: mode ?? (interactive ? .box : .list))
        do {
            wake = try WakePipe()
        } catch {
            fatalError("sqlive: \(error)")
        }
        sink = OutputSink(buffered: !interactive)
        let environment = ProcessInfo.processInfo.environment
        colour = Terminal.usesColour(
            interactive: interactive, environment: environment, outputIsTerminal: Terminal.isOutputTerminal)
        colourForced = Terminal.colourForced(environment: environment)
        let capable = interactive && Terminal.supportsPanel(environment: environment)
        panel = LivePanel(capable: capable, watches: WatchTable(keepsPanelEntries: capable), sink: sink)
        signals = SignalState(wake: wake)
        events = EventQueue(wake: wake)
    }

    /// Whether the session is over.
    var isFinished: Bool { exitCode != nil || stopped || signals.termination != nil }

    /// The settings renderers use now (the terminal may have been resized).
    /// Interactive sessions draw grids for the terminal; scripts write
    /// sqlite3's bytes, except that forced colour (a sqlive extension)
    /// highlights the terminal's grids.
    var renderSettings: RenderSettings {
        let terminal = interactive || colour
        return shell.renderSettings(maxWidth: terminal ? Terminal.width() : nil, colour: colour, terminal: terminal)
    }

    // MARK: - Database

    /// Opens a database, replacing the current one only if opening succeeds.
    func open(_ path: String?, readonly: Bool) throws {
        let location = DatabaseLocation(path)
        let created = location.filePath.flatMap { FileManager.default.fileExists(atPath: $0) ? nil : $0 }
        var settings = LiveDatabase.Options(readonly: readonly, liveQueries: liveQueryOptions)
        // The sqlite3 shell's SQL functions, on the session's connection alone.
        settings.prepareSession = { ShellFunctions.register(on: $0) }
        let options = settings
        let database = try Blocking.run { try await LiveDatabase.open(location, options: options) }
        if let reason = database.info.readonlyReason {
            // As the sqlite3 shell opens it, and said in a line.
            sink.writeError("sqlive: \(database.info.path) is opened read-only: \(reason)\n")
        }
        closeDatabase()
        self.database = database
        createdFile = created
        usedDatabase = false
        try installSafeModeGuard(on: database)
        signals.setDatabase(database)
        database.traceSettings = shell.traceSettings
        pumps = events.pump(database)
        completion.invalidate()
    }

    /// Drops the live queries and closes the database.
    func closeDatabase() {
        guard let database else { return }
        stopLivePage()
        watches.remove(nil)
        do {
            try Blocking.run {
                await database.directory.unregisterAll()
                await database.close()
            }
        } catch {
            reportError("closing the database: \(error)")
        }
        for pump in pumps { pump.cancel() }
        pumps = []
        feedPump?.cancel()
        feedPump = nil
        completionWatch?.cancel()
        completionWatch = nil
        _ = events.takeAll()
        signals.setDatabase(nil)
        self.database = nil
        // As sqlite3, which opens its database file at the first command
        // that needs it: a file this session created and nothing used is
        // not left behind (still empty: no page, no journal).
        if let file = createdFile, !usedDatabase {
            var status = stat()
            if stat(file, &status) == 0, status.st_size == 0,
                !["-wal", "-journal"].contains(where: { FileManager.default.fileExists(atPath: file + $0) })
            {
                unlink(file)
                unlink(file + "-shm")
            }
        }
        createdFile = nil
    }

    func requireDatabase() throws -> LiveDatabase {
        guard let database else { throw CommandFailure("no database is open") }
        usedDatabase = true
        return database
    }

    // MARK: - Running input

    /// Runs one unit of input; returns whether it succeeded.
    @discardableResult
    func run(_ unit: InputAccumulator.Unit, source: Source = Source()) -> Bool {
        guard !isFinished else { return false }
        let start = ContinuousClock.now
        var usageBefore = rusage()
        if shell.timer { getrusage(RUSAGE_SELF.rawValue, &usageBefore) }
        let outermost = beginCommand()
        var echo: LiveEcho?
        if interactive && outermost, case .sql = unit, !watches.isEmpty {
            echo = LiveEcho(settings: renderSettings, events: events, sink: sink, panel: panel)
        }
        var onTick: (@Sendable () -> Void)?
        if let echo { onTick = { echo.flush() } }
        let indicator = interactive && outermost ? ElapsedIndicator(sink: sink, onTick: onTick) : nil
        indicator?.start()
        let ok: Bool
        switch unit {
        case .dotCommand(let text, let number):
            do {
                ok = runDotCommand(try text.decoded(firstLine: number, what: "command"), line: number, source: source)
            } catch {
                reportError(error.description, line: error.line, source: source)
                ok = false
            }
        case .sql(let text, let number):
            do {
                ok = runSQL(try text.decoded(firstLine: number), line: number, source: source)
            } catch {
                reportError(error.description, line: error.line, source: source)
                ok = false
            }
        }
        indicator?.stop()
        endCommand(outermost: outermost)
        if ok && shell.changes && !isFinished, case .sql(_, let line) = unit {
            printChangeCounts(line: line, source: source)
        }
        if shell.timer && !isFinished, case .sql = unit {
            // As sqlite3: the wall clock, and the process's user and system
            // CPU time (`getrusage`) the command took.
            let elapsed = ContinuousClock.now - start
            var usageAfter = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usageAfter)
            func seconds(_ after: timeval, _ before: timeval) -> Double {
                Double(after.tv_sec - before.tv_sec) + Double(after.tv_usec - before.tv_usec) / 1_000_000
            }
            write(
                String(
                    format: "Run Time: real %.3f user %f sys %f\n", elapsed.milliseconds / 1000,
                    seconds(usageAfter.ru_utime, usageBefore.ru_utime),
                    seconds(usageAfter.ru_stime, usageBefore.ru_stime)))
        }
        // Every command counts for `.once`, those of a `.read` file too, as in sqlite3.
        outputCommandDidEnd()
        diagnostics.commandDidEnd()
        if !ok { commandFailed() }
        printEvents()
        return ok
    }

    /// Marks a command (or a batch of them) running; returns whether it is
    /// the outermost one, which Ctrl-C interrupts.
    func beginCommand() -> Bool {
        let outermost = runDepth == 0
        runDepth += 1
        if outermost {
            signals.setRunning(true)
            sink.commandDidStart()
        }
        return outermost
    }

    /// Ends what `beginCommand` began; an interrupt left over is dropped.
    func endCommand(outermost: Bool) {
        runDepth -= 1
        if outermost {
            signals.setRunning(false)
            _ = signals.takeInterrupt()
        }
    }

    /// A command failed: the session's exit status says so, and `--bail`
    /// ends a script there.
    func commandFailed() {
        failed = true
        if bail && !interactive { stopped = true }
    }

    /// Reports a statement's failure after what the statement rendered
    /// before it, at its line; an interactive session points at the error.
    func report(
        _ failure: SQLiteFailure, in sql: String, line: Int, source: Source, consumer: inout RenderingConsumer
    ) {
        flush(&consumer)
        if exitIfRefused(sql: sql, line: line) { return }
        lastFailureCode = failure.code & 0xFF
        let text = ShellErrorText(failure, script: sql)
        switch errorStyle {
        case .argument:
            writeErrorLine(text.argumentLine)
        case .script:
            // As sqlite3: the line where the command began, except in what
            // is typed at the prompt.
            writeErrorLine(text.scriptLine(line: interactive && source.name == nil ? nil : line))
        }
    }

    private func runSQL(_ sql: String, line: Int, source: Source) -> Bool {
        guard let database else {
            reportError("no database is open", line: line, source: source)
            return false
        }
        usedDatabase = true
        // With `.explain auto` (the default), as in sqlite3.
        if shell.autoExplain, let query = Self.explainedQuery(sql) {
            // The tree alone, as the sqlite3 shell prints it (`.explain`
            // adds the hints).
            return attempt(line: line, source: source) {
                let plan = try Blocking.run { try await database.explainQueryPlan(query) }
                try sink.write(plan.rendered + "\n")
            }
        }
        var consumer = RenderingConsumer(
            settings: renderSettings, sink: sink, trace: shell.trace, signals: interactive ? signals : nil,
            stats: shell.stats, flushesRows: diagnostics.traceOutput != nil)
        do {
            let signals = signals
            try database.run(
                sql, parameters: .shell, isCancelled: { signals.isCommandCancelled }, consumer: &consumer)
            shell.didPrintColumns(consumer.widestColumnar)
            return true
        } catch let failure as SQLiteFailure {
            shell.didPrintColumns(consumer.widestColumnar)
            report(failure, in: sql, line: line, source: source, consumer: &consumer)
        } catch is RenderingConsumer.Interrupted {
            flush(&consumer)
            reportError("interrupted", line: line, source: source)
        } catch is OutputSink.Closed {
            stopped = true
        } catch {
            flush(&consumer)
            reportError("\(error)", line: line, source: source)
        }
        return false
    }

    /// Writes what a failed script had rendered; a closed output ends the session.
    func flush(_ consumer: inout RenderingConsumer) {
        do {
            try consumer.flush()
        } catch {
            stopped = true
        }
    }

    private func runDotCommand(_ line: String, line number: Int, source: Source) -> Bool {
        commandLine = number
        // As sqlite3 reports a dot-command's failure: its usage text as it
        // is, anything else after `Error: `, and no line number.
        if refuseInSafeMode(line, number: number) { return false }
        defer { exitIfRefusedDuringCommand() }
        return attempt(report: { message in
            writeErrorLine(message.hasPrefix("Usage:") ? message : "Error: " + message)
        }) {
            do {
                try perform(try DotCommand.parse(line), source: source)
            } catch let error as DotCommand.ParseError where error.onOutput {
                try sink.write(error.description)
                throw CommandFailure.reported
            } catch let error as DotCommand.ParseError where error.verbatim {
                throw CommandFailure(verbatim: error.description)
            }
        }
    }

    /// Runs a command's work, reporting what it throws; returns whether it succeeded.
    private func attempt(line number: Int, source: Source, _ body: () throws -> Void) -> Bool {
        attempt(report: { reportError($0, line: number, source: source) }, body)
    }

    private func attempt(report: (String) -> Void, _ body: () throws -> Void) -> Bool {
        do {
            try body()
            return true
        } catch let error as DotCommand.ParseError {
            report(error.description)
        } catch let error as SQLiveError {
            report(error.description)
        } catch let error as SQLiteFailure {
            report(error.message)
        } catch let error as CommandFailure where error.alreadyReported {
            _ = error
        } catch let error as CommandFailure where error.verbatim {
            writeErrorLine(error.message)
        } catch let error as CommandFailure {
            report(error.message)
        } catch is OutputSink.Closed {
            stopped = true
        } catch is CancellationError {
            report("interrupted")
        } catch {
            report("\(error)")
        }
        return false
    }

    /// The statement of a lone `EXPLAIN QUERY PLAN ...`, which prints as a
    /// tree, as in sqlite3.
    static func explainedQuery(_ sql: String) -> String? {
        // Most statements are not: look at the first word before anything else.
        let explain = Array("EXPLAIN".utf8)
        guard
            sql.utf8.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }).prefix(7)
                .elementsEqual(explain, by: { $0 & 0xDF == $1 })
        else { return nil }
        var text = sql.trimmingCharacters(in: .whitespacesAndNewlines)
        while text.hasSuffix(";") { text = String(text.dropLast()).trimmingCharacters(in: .whitespacesAndNewlines) }
        let words = text.split(maxSplits: 3, whereSeparator: { $0.isWhitespace })
        guard words.count == 4, words[0].uppercased() == "EXPLAIN", words[1].uppercased() == "QUERY",
            words[2].uppercased() == "PLAN", !text.contains(";")
        else { return nil }
        return String(words[3])
    }
}

/// A dot-command failed; `message` says why.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    /// Whether `message` prints as it is, not after `Error: `.
    var verbatim = false
    init(_ message: String) { self.message = message }
    init(verbatim message: String) {
        self.message = message
        verbatim = true
    }
    /// A failure whose message was written already: the command only fails.
    static let reported = CommandFailure(verbatim: "")
    var alreadyReported: Bool { verbatim && message.isEmpty }
    var description: String { message }
}

extension Session {
    /// The completer for the next line: the cached schema and the live
    /// queries' names.
    func completer() -> Completer {
        if completionWatch == nil, let database { completionWatch = completion.generation.watch(database) }
        return completion.completer(database: database, liveQueryNames: watches.names)
    }
}
