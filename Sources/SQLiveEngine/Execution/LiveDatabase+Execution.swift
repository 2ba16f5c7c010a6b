import CSQLiveSupport
import GRDB
import GRDBSQLite

extension LiveDatabase {
    /// Runs a script of one or more SQL statements and collects each
    /// statement's result.
    ///
    /// Statements run in order on the writer connection, outside of any
    /// implicit transaction: `BEGIN` and `COMMIT` in the script mean what
    /// they say. When a statement fails, the ones before it stay applied.
    ///
    /// ```swift
    /// let results = try await database.execute(
    ///     "SELECT name, score FROM players WHERE gameID = ? ORDER BY score",
    ///     parameters: .positional([.integer(1)]),
    ///     maxRows: 100)
    /// ```
    ///
    /// - parameter maxRows: The most rows read per statement: a longer
    ///   result is cut there and marked `truncated`, without reading the rest.
    /// - throws: `ScriptFailure`, with the results of the statements that ran.
    public func execute(
        _ script: String, parameters: QueryParameters = .none, maxRows: Int? = nil
    ) async throws(ScriptFailure) -> [StatementResult] {
        var script = ScriptRunner(script: script, parameters: parameters, maxRows: maxRows, tracer: tracer)
        script.remote(remote, readonly: options.readonly)
        let runner = script
        let live = live
        let outcome: Result<[StatementResult], ScriptFailure>
        do {
            outcome = try await writer.writeWithoutTransaction { db in Self.collect(runner, in: db, live: live) }
        } catch {
            throw ScriptFailure(completed: [], failure: Self.failure(from: error))
        }
        return try outcome.get()
    }

    /// Runs a script on the session's connection and collects its results,
    /// up to the failing statement.
    private static func collect(
        _ runner: ScriptRunner, in db: Database, live: LiveQueryCenter
    ) -> Result<[StatementResult], ScriptFailure> {
        defer { live.scriptDidRun(runner.script, db) }
        runner.tracer?.matchSessionTrace(on: db)
        var collector = ResultCollector()
        do {
            try run(runner, in: db, live: live, consumer: &collector)
            return .success(collector.results)
        } catch {
            var results = collector.results
            // The failing statement's partial result is not a result.
            if let failure = error as? SQLiteFailure, let index = failure.statementIndex, results.count > index {
                results.removeLast(results.count - index)
            }
            return .failure(ScriptFailure(completed: results, failure: failure(from: error)))
        }
    }

    /// Runs a script synchronously, streaming results to a consumer.
    ///
    /// This blocks the calling thread until the script ends: use it from a
    /// thread of your own (the REPL's), never from Swift concurrency's pool.
    /// Call `interrupt()` from another thread to stop a long statement.
    ///
    /// - parameter traced: Whether `.trace` shows the statements: a front
    ///   end's own queries (the sqlite3 shell's `.dump`) are not the user's.
    /// - parameter isCancelled: Asked before the script starts and while
    ///   it runs (`CancellationWatch`): a script cancelled as it starts
    ///   stops too, where `interrupt()` alone would miss it.
    /// - parameter forClient: Whether a server's client sent the script
    ///   (the page, an editor, an agent): then `ClientGuard` refuses what
    ///   such a client may not reach (the shell's file functions; with a
    ///   read-only database, also ATTACH, VACUUM INTO and moving temporary
    ///   storage to disk).
    /// - throws: `SQLiteFailure` (with the failing statement's index), or
    ///   the consumer's own error.
    public func run(
        _ script: String, parameters: QueryParameters = .none, maxRows: Int? = nil, traced: Bool = true,
        forClient: Bool = false, isCancelled: (@Sendable () -> Bool)? = nil, consumer: inout some ResultConsumer
    ) throws {
        var runner = ScriptRunner(
            script: script, parameters: parameters, maxRows: maxRows, tracer: traced ? tracer : nil)
        runner.remote(remote, readonly: options.readonly)
        let tracer = tracer
        let guardLevel = forClient ? ClientGuard.level(readonly: info.readonly) : nil
        do {
            try writer.writeWithoutTransaction { db in
                defer { live.scriptDidRun(script, db) }
                tracer.matchSessionTrace(on: db)
                try ClientGuard.serving(db, level: guardLevel) {
                    try CancellationWatch.watching(db, isCancelled) {
                        try Self.run(runner, in: db, live: live, consumer: &consumer)
                    }
                }
            }
        } catch let failure as SQLiteFailure {
            throw failure
        } catch let error as DatabaseError {
            throw SQLiteFailure(error)
        }
    }

    /// Runs scripts one after the other in one visit to the session's
    /// connection, each as `run` runs it, their results streamed to one
    /// consumer.
    ///
    /// A script stops at its first failing statement, as in `run`; then
    /// `failed` is told (with the script's index, and the consumer, to
    /// flush what it holds) and answers whether the next scripts run. The
    /// consumer's own errors end the whole run. A scripted session hands
    /// its consecutive SQL commands over this way: one hop to the
    /// connection for many commands instead of one each.
    ///
    /// This blocks the calling thread, as `run` does.
    ///
    /// - parameter isCancelled: Asked while the scripts run, as by `run`; a
    ///   statement it stops fails "interrupted" (told to `failed`). When it
    ///   is true before the first script, none runs.
    /// - parameter parameters: Bound in every script (`.shell`: as the
    ///   sqlite3 shell binds them).
    public func run<Consumer: ResultConsumer>(
        scripts: [String], parameters: QueryParameters = .none, traced: Bool = true,
        isCancelled: (@Sendable () -> Bool)? = nil,
        consumer: inout Consumer,
        failed: (_ index: Int, _ failure: SQLiteFailure, _ consumer: inout Consumer) throws -> Bool
    ) throws {
        let tracer = tracer
        let live = live
        let (remote, readonly) = (remote, options.readonly)
        do {
            try writer.writeWithoutTransaction { db in
                tracer.matchSessionTrace(on: db)
                try CancellationWatch.watching(db, isCancelled) {
                    for (index, script) in scripts.enumerated() {
                        var runner = ScriptRunner(
                            script: script, parameters: parameters, maxRows: nil, tracer: traced ? tracer : nil)
                        runner.remote(remote, readonly: readonly)
                        let failure: SQLiteFailure
                        do {
                            defer { live.scriptDidRun(script, db) }
                            try Self.run(runner, in: db, live: live, consumer: &consumer)
                            continue
                        } catch let error as SQLiteFailure {
                            failure = error
                        } catch let error as DatabaseError {
                            failure = SQLiteFailure(error)
                        }
                        guard try failed(index, failure, &consumer) else { return }
                    }
                }
            }
        } catch let error as DatabaseError {
            throw SQLiteFailure(error)
        }
    }

    /// Creates `temp.sqlite_parameters`, the table the sqlite3 shell's
    /// `.parameter` keeps its bindings in (`QueryParameters.shell` binds
    /// from it), as the shell does: its name is reserved for SQLite, so the
    /// session's connection writes it with the schema made writable, and
    /// defensive mode off, for that statement alone.
    ///
    /// This blocks the calling thread, as `run` does.
    public func createShellParameters() throws(SQLiveError) {
        do {
            try writer.writeWithoutTransaction { db in
                guard let connection = db.sqliteConnection else { throw SQLiveError.closed }
                var defensive: Int32 = 0
                var writable: Int32 = 0
                sqlive_db_config_flag(connection, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive)
                sqlive_db_config_flag(connection, SQLITE_DBCONFIG_DEFENSIVE, 0, nil)
                sqlive_db_config_flag(connection, SQLITE_DBCONFIG_WRITABLE_SCHEMA, -1, &writable)
                sqlive_db_config_flag(connection, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 1, nil)
                defer {
                    sqlive_db_config_flag(connection, SQLITE_DBCONFIG_WRITABLE_SCHEMA, writable, nil)
                    sqlive_db_config_flag(connection, SQLITE_DBCONFIG_DEFENSIVE, defensive, nil)
                }
                sqlite3_exec(
                    connection,
                    "CREATE TABLE IF NOT EXISTS temp.sqlite_parameters(\n  key TEXT PRIMARY KEY,\n  value\n) WITHOUT ROWID;",
                    nil, nil, nil)
            }
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    /// The session connection's change counters (`sqlite3_changes64` and
    /// `sqlite3_total_changes64`), which the sqlite3 shell's `.changes on`
    /// prints after each command.
    ///
    /// This blocks the calling thread, as `run` does.
    public func changeCounts() throws(SQLiveError) -> ChangeCounts {
        do {
            return try writer.writeWithoutTransaction { db in
                guard let connection = db.sqliteConnection else { throw SQLiveError.closed }
                return ChangeCounts(
                    changes: Int(sqlite3_changes64(connection)), totalChanges: Int(sqlite3_total_changes64(connection)))
            }
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    /// Runs a script on the session's connection: through GRDB while a
    /// live query exists, on SQLite directly otherwise.
    private static func run(
        _ runner: ScriptRunner, in db: Database, live: LiveQueryCenter, consumer: inout some ResultConsumer
    ) throws {
        guard let pathGuard = live.pathGuard else {
            return try runChecked(runner, in: db, live: live, consumer: &consumer)
        }
        do {
            try runChecked(runner, in: db, live: live, consumer: &consumer)
        } catch let failure as SQLiteFailure {
            throw pathGuard.explain(failure)
        } catch let error as DatabaseError {
            throw pathGuard.explain(SQLiteFailure(error))
        }
    }

    private static func runChecked(
        _ runner: ScriptRunner, in db: Database, live: LiveQueryCenter, consumer: inout some ResultConsumer
    ) throws {
        if let remote = runner.remote {
            // Run on the leader: no commit here; what it wrote reaches the
            // mirror before the script returns.
            if try runner.runDirectly(in: db, consumer: &consumer, ledger: nil) { remote.syncNow() }
            return
        }
        let observed = try live.scriptWillRun(db, script: runner.script)
        guard !observed else {
            try runner.run(in: db, consumer: &consumer)
            return
        }
        var wrote = false
        defer { if wrote { live.unobservedScriptDidWrite() } }
        do {
            wrote = try GRDBAuthorizer.suspended(on: db) {
                try runner.runDirectly(in: db, consumer: &consumer, ledger: live.ledger)
            }
        } catch {
            // A statement that failed may have written before (a trigger, a
            // partial multi-row insert outside a transaction).
            wrote = true
            throw error
        }
    }

    static func failure(from error: any Error) -> SQLiteFailure {
        if let failure = error as? SQLiteFailure { return failure }
        switch SQLiveError.wrap(error) {
        case .sqlite(let failure): return failure
        case let other: return SQLiteFailure(code: 1, extendedCode: 1, message: other.description)
        }
    }
}

/// A connection's change counters.
public struct ChangeCounts: Hashable, Sendable {
    /// Rows changed by the most recent `INSERT`, `UPDATE` or `DELETE` (not
    /// reset by other statements).
    public var changes: Int
    /// Rows changed since the connection opened.
    public var totalChanges: Int

    public init(changes: Int, totalChanges: Int) {
        self.changes = changes
        self.totalChanges = totalChanges
    }
}
