import Foundation
import GRDB
import SQLiveLocks

/// Wires change detection to the scheduler for one database, and owns
/// every task and thread of the live path.
///
/// ```text
///  session's commits, rollbacks ─► ChangeRecorder (TransactionObserver) ─────────────┐
///  other writers ─► ExternalChangeWatcher (thread: inotify, polling, DataVersionProbe) │
///                        │ commit / maybe the session's (LocalCommitLedger)         │
///                        ▼                                                          ▼
///                   run loop: resolve ─────────────► AsyncStream<ChangeSignal> ─► RefreshScheduler (actor)
///                                                     Mark → Fetch → Reduce → Notify │
///                                                                                    ▼
///                                                   Broadcaster<LiveQueryNotice> ─► front ends
/// ```
///
/// Ownership: `start` starts the watcher's thread and one run task, a task
/// group whose children serve the signals, the scheduler's timer, its
/// refreshes, the handles' releases and slow queries' own lanes. `shutdown` (or `deinit`) stops the watcher and finishes the
/// streams; every child then ends, and `shutdown` waits for the run task.
final class LiveQueryCenter: Sendable {
    let scheduler: RefreshScheduler<ContinuousClock>
    /// Where events go: the database's own broadcaster, which outlives a
    /// center replaced when the file was (`LiveDatabase.follow`).
    let events: Broadcaster<LiveQueryNotice>
    /// The change feed: the main file's watcher derives rows for it.
    private let rowFeed: RowFeed?
    /// Called when the watched file was replaced by another one at its path.
    private let fileWasReplaced: @Sendable (DatabaseFileChange) -> Void
    let reader: LiveQueryReader
    let interest = Interest()
    /// Quick live queries read at sqlive's own commits.
    let prefetch: LocalPrefetch
    private let recorder: ChangeRecorder
    let ledger = LocalCommitLedger()
    /// Refuses the session's writes while its path leads elsewhere.
    let pathGuard: PathGuard?
    private let session: any DatabaseWriter
    private let location: DatabaseLocation
    private let options: LiveQueryOptions
    private let signals: AsyncStream<ChangeSignal>
    private let signalContinuation: AsyncStream<ChangeSignal>.Continuation
    private let findings: AsyncStream<ExternalChangeWatcher.Finding>
    private let findingContinuation: AsyncStream<ExternalChangeWatcher.Finding>.Continuation
    private let resolver: ExternalCommitResolver<ContinuousClock>

    // Mutable State: guarded by the mutex; set by start() and shutdown().
    private struct State {
        var watcher: ExternalChangeWatcher?
        /// Watchers of the database files the session attached, by schema name.
        var attached: [String: (file: String, watcher: ExternalChangeWatcher)] = [:]
        var run: Task<Void, Never>?
    }
    private let state = Locked(State())

    init(
        session: any DatabaseWriter, location: DatabaseLocation, configuration: Configuration, tracer: StatementTracer,
        options: LiveQueryOptions, events: Broadcaster<LiveQueryNotice> = Broadcaster(), rowFeed: RowFeed? = nil,
        fileWasReplaced: @escaping @Sendable (DatabaseFileChange) -> Void = { _ in }
    ) throws {
        self.events = events
        self.rowFeed = rowFeed
        self.fileWasReplaced = fileWasReplaced
        self.session = session
        self.location = location
        self.options = options
        pathGuard = PathGuard(location: location)
        (signals, signalContinuation) = AsyncStream<ChangeSignal>.makeStream()
        (findings, findingContinuation) = AsyncStream<ExternalChangeWatcher.Finding>.makeStream()
        let continuation = signalContinuation
        prefetch = LocalPrefetch(options: options, tracer: tracer)
        recorder = ChangeRecorder(
            interest: interest, ledger: ledger, prefetch: options.readAtCommitLimit == nil ? nil : prefetch
        ) { signal in
            continuation.yield(signal)
        }
        reader = try LiveQueryReader(session: session, location: location, configuration: configuration)
        resolver = ExternalCommitResolver(session: session, clock: ContinuousClock(), ledger: ledger)
        // Live queries kept from the change feed's rows: a watched file's.
        var inbox: MaintenanceInbox?
        var baseReader: MaintainedBaseReader?
        if let rowFeed, let path = location.filePath, reader.committed != nil,
            options.externalDetection != .disabled, !location.isImmutable, options.maintainsFromRows
        {
            inbox = MaintenanceInbox()
            baseReader = MaintainedBaseReader(path: DatabaseLocation.resolvingSymbolicLinks(path))
            rowFeed.attach(inbox)
        }
        scheduler = RefreshScheduler(
            reader: reader, tracer: tracer, events: events, interest: interest, prefetch: prefetch, options: options,
            clock: ContinuousClock(), inbox: inbox, baseReader: baseReader)
    }

    /// Starts observing: the recorder on the session's connection, the
    /// watcher, and the run loop. Whatever it started is stopped if a later
    /// step fails.
    func start() async throws {
        let recorder = recorder
        let resolver = resolver
        try await session.writeWithoutTransaction { db in
            // The recorder is installed when the first live query comes
            // (`scriptWillRun`). Priming it now also opens the temp schema
            // on the session's connection, which decides where a live query
            // of `sqlite_temp_master` reads.
            try recorder.prime(db)
            try resolver.prime("main", db)
        }
        if let path = location.filePath, isWatching {
            let watcher = try makeWatcher(path: path, schema: "main", rowFeed: rowFeed)
            state.withLock { $0.watcher = watcher }
        }
        let run = Task { [scheduler, signals, findings, signalContinuation, fileWasReplaced] in
            await Self.run(
                scheduler: scheduler, signals: signals, findings: findings, emit: { signalContinuation.yield($0) },
                resolver: resolver, fileWasReplaced: fileWasReplaced)
        }
        state.withLock { $0.run = run }
    }

    /// How other processes' commits are matched to live queries: by table
    /// when every watched file is in WAL mode with a readable wal-index.
    var precision: ExternalPrecision {
        let watchers = state.withLock { [$0.watcher].compactMap { $0 } + $0.attached.values.map(\.watcher) }
        guard !watchers.isEmpty, watchers.allSatisfy({ $0.precision == .tables }) else { return .all }
        return .tables
    }

    /// What reading the WAL has cost, over every watched file.
    var walPrecisionStatistics: WALPrecisionStatistics {
        let watchers = state.withLock { [$0.watcher].compactMap { $0 } + $0.attached.values.map(\.watcher) }
        return watchers.map { $0.statistics.withLock { $0 } }.reduce(WALPrecisionStatistics(), +)
    }

    /// Whether other writers are watched (not for an in-memory database,
    /// nor for a file opened as immutable, which nobody writes).
    private var isWatching: Bool {
        reader.committed != nil && options.externalDetection != .disabled && !location.isImmutable
    }

    private func makeWatcher(path: String, schema: String, rowFeed: RowFeed? = nil) throws(SQLiveError)
        -> ExternalChangeWatcher
    {
        let mode: ExternalChangeWatcher.Mode =
            switch options.externalDetection {
            case .polling(let interval): .polling(interval)
            default: .inotify(safetyPoll: options.safetyPollInterval)
            }
        let findings = findingContinuation
        return try ExternalChangeWatcher(
            path: DatabaseLocation.resolvingSymbolicLinks(path), schema: schema, mode: mode,
            fallbackPolling: options.pollingInterval,
            walPrecision: options.walPrecision, ledger: ledger, rowFeed: rowFeed, emit: { findings.yield($0) })
    }

    /// Watches the database files the session has attached like the main
    /// file, and stops watching those it detached. Runs on the session's
    /// connection.
    private func watchAttachments(_ db: Database) throws {
        guard isWatching else { return }
        let files = try LiveQueryReader.attachedFiles(db)
        let current = state.withLock { $0.attached.mapValues(\.file) }
        for (schema, file) in current where files[schema] != file {
            let removed = state.withLock { $0.attached.removeValue(forKey: schema) }
            removed?.watcher.stop()
            resolver.forget(schema)
        }
        for (schema, file) in files where current[schema] != file {
            try resolver.prime(schema, db)
            let watcher = try makeWatcher(path: file, schema: schema)
            state.withLock { $0.attached[schema] = (file, watcher) }
        }
    }

    /// The run loop: one task group, one child per stream, and a short
    /// child per ambiguous commit. It ends when the findings end (the
    /// watcher stopped), after shutting the scheduler down.
    private static func run(
        scheduler: RefreshScheduler<ContinuousClock>, signals: AsyncStream<ChangeSignal>,
        findings: AsyncStream<ExternalChangeWatcher.Finding>, emit: @escaping @Sendable (ChangeSignal) -> Void,
        resolver: ExternalCommitResolver<ContinuousClock>,
        fileWasReplaced: @escaping @Sendable (DatabaseFileChange) -> Void
    ) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await signal in signals {
                    // sqlive's own commit: its refresh runs here, at once
                    // (the signals that come meanwhile wait for it, as they
                    // would wait for the refresh anyway).
                    await scheduler.handleRefreshingAtOnce(signal)
                }
            }
            group.addTask {
                for await deadline in scheduler.wakes {
                    do {
                        try await scheduler.clock.sleep(until: deadline, tolerance: nil)
                    } catch {
                        return
                    }
                    await scheduler.timerDidFire()
                }
            }
            group.addTask {
                for await batch in scheduler.refreshes {
                    await scheduler.refresh(batch)
                }
            }
            group.addTask {
                // Kept queries' bases, one at a time.
                for await definition in scheduler.baseReads {
                    await scheduler.readBase(definition)
                }
            }
            group.addTask {
                for await _ in scheduler.releases {
                    await scheduler.serveReleases()
                }
            }
            group.addTask {
                // Slow queries' own lanes: each read beside the refreshes,
                // stopped by the scheduler's guards (at the latest when it
                // shuts down, which ends this stream).
                await withDiscardingTaskGroup { lanes in
                    for await definition in scheduler.laneRuns {
                        lanes.addTask { await scheduler.runOwnLane(definition) }
                    }
                }
            }
            for await finding in findings {
                switch finding {
                case .commit(mayBeLocal: false, _, let tables):
                    emit(.external(tables))
                case .commit(mayBeLocal: true, let schema, let tables):
                    resolver.resolve(schema, tables: tables, in: &group, emit: emit)
                case .fileChanged(let change) where change.reason == .replaced:
                    // The owner follows the path: it opens the new file and
                    // moves the live queries there, then says so.
                    fileWasReplaced(change)
                case .fileChanged(let change):
                    emit(.fileChanged(change))
                case .damage(let failure, let schema, let path):
                    if schema == "main" {
                        let reason: DatabaseFileChange.Reason = failure == nil ? .repaired : .damaged
                        let message = failure.map { "\(path) is damaged: \($0.message)" }
                        emit(.damage(failure, DatabaseFileChange(path: path, reason: reason, message: message)))
                    } else {
                        // An attached file: the queries that read it find out.
                        emit(.fileWritten)
                    }
                case .fileWritten:
                    emit(.fileWritten)
                }
            }
            await scheduler.shutdown()
        }
    }

    /// Called on the session's connection before each script: whether its
    /// statements must run through GRDB, whose transaction observation
    /// reports their row events (a live query exists). Otherwise they run
    /// on SQLite directly.
    ///
    /// A script that may set `reverse_unordered_selects`, under which the
    /// session's connection reads in another order than the live queries',
    /// ends reading at commit for the session.
    func scriptWillRun(_ db: Database, script: String? = nil) throws -> Bool {
        pathGuard?.check(db, script: script)
        if let script, script.mayChangeHowReadsAnswer { prefetch.stop() }
        return try recorder.prepareForScript(db)
    }

    /// Called after the session's connection replaced pages of the file
    /// without a statement (`.restore`): every live query refreshes.
    func pagesWereReplaced() {
        signalContinuation.yield(.localUnobserved)
    }

    /// Called on the session's connection after a script that ran on
    /// SQLite directly and may have written: a live query that was
    /// registered meanwhile refreshes, since its first read may have
    /// come before the script's commit.
    func unobservedScriptDidWrite() {
        if interest.queryCount > 0 {
            signalContinuation.yield(.localUnobserved)
        }
    }

    /// Called on the session's connection, inside the transaction, after
    /// rows were inserted into `table` on SQLite directly while the recorder
    /// observes (a bulk insert): the transaction's commit refreshes the live
    /// queries that read the table, once.
    func rowsWereInsertedDirectly(into table: String, mayChangeOtherTables: Bool) {
        recorder.rowsWereInserted(into: table, mayChangeOtherTables: mayChangeOtherTables)
    }

    /// Called on the session's connection after each script: follows the
    /// databases it attached or detached on the committed connection.
    func scriptDidRun(_ script: String, _ db: Database) {
        guard script.mayAttachOrDetach else { return }
        do {
            try reader.mirrorAttachments(from: db)
            try watchAttachments(db)
        } catch {
            Log.engine.warning("attaching to the live-query connection: \(error)")
        }
    }

    /// Stops every thread and task, drops every live query, and waits
    /// until all of it has ended.
    func shutdown() async {
        let (watchers, run) = state.withLock { state in
            defer {
                state.watcher = nil
                state.attached = [:]
                state.run = nil
            }
            return ([state.watcher].compactMap { $0 } + state.attached.values.map(\.watcher), state.run)
        }
        for watcher in watchers { watcher.stop() }
        findingContinuation.finish()
        signalContinuation.finish()
        await scheduler.shutdown()
        await run?.value
        let recorder = recorder
        do {
            try await session.writeWithoutTransaction { db in recorder.uninstall(db) }
        } catch {
            Log.monitor.debug("removing the change recorder: \(error)")
        }
        reader.close()
    }

    deinit {
        // Dropped without `shutdown`: stop the thread and end the run loop,
        // which shuts the scheduler down as it ends.
        let watchers = state.withLock { [$0.watcher].compactMap { $0 } + $0.attached.values.map(\.watcher) }
        for watcher in watchers { watcher.stop() }
        findingContinuation.finish()
        signalContinuation.finish()
    }
}
