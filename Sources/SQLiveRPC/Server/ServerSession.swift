import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

/// The state of one client's session: the open database and its live queries.
///
/// The session holds one database at a time; `database/open` replaces it.
/// For the open database, one task forwards live-query events as
/// notifications, and another forwards traced statements: one owner per
/// stream, so notifications keep the engine's order.
actor ServerSession {
    /// Where notifications go.
    let writer: MessageWriter
    /// The open documents of the language server, checked against the
    /// session's database (or their own).
    let language: LanguageService
    /// The options every database is opened with; `initialize` may change
    /// the live queries' refresh budget.
    private(set) var databaseOptions: LiveDatabase.Options

    // Mutable State
    //
    // `opened` is guarded by its mutex, so that requests on the serial
    // lane read it without a hop to the actor; it changes only in barrier
    // requests (`database/open`, `shutdown`), so no other request runs
    // meanwhile. The rest is isolated to the actor.
    private struct Opened {
        var database: LiveDatabase?
        /// Why the database named on the command line could not be opened.
        var startupFailure: String?
    }
    private let opened = Locked(Opened())
    private var forwarders: [Task<Void, Never>] = []
    /// The change feed's subscriptions (`changes/subscribe`), each one
    /// task that forwards it, by number.
    var changeSubscriptions: [Int: Task<Void, Never>] = [:]
    var nextChangeSubscription = 1
    private var traceSettings = TraceSettings.off

    /// Where relative database paths are read from; nil for the current
    /// directory.
    let directory: URL?

    /// A database another owner opened and closes, shared with other
    /// sessions (the live page's tabs): the session's live queries are in
    /// a directory of its own, `database/open` is refused, and closing the
    /// session drops only its own live queries. Nil: the session owns its
    /// database.
    let shared: (database: LiveDatabase, liveQueries: LiveQueryDirectory)?
    /// Whether the shared session's live queries are its own (a tab's),
    /// dropped when it closes, or the database's own directory (the
    /// REPL's, for `.web`).
    var ownsLiveQueries: Bool {
        guard let shared else { return true }
        return shared.liveQueries !== shared.database.directory
    }

    /// The client's own connection to the shared database (a tab's), where
    /// its statements run: its temporary tables, `PRAGMA`s and
    /// transactions are its own, and closing the session rolls back what
    /// it left open. Nil: its statements run on the database's session
    /// connection (an in-memory database, the REPL's `.web`).
    let client: ClientConnection?

    init(
        writer: MessageWriter, directory: URL? = nil, databaseOptions: LiveDatabase.Options = LiveDatabase.Options(),
        sharing database: LiveDatabase? = nil, liveQueries: LiveQueryDirectory? = nil, client: ClientConnection? = nil
    ) {
        self.client = client
        self.writer = writer
        self.language = LanguageService(writer: writer)
        self.directory = directory
        self.databaseOptions = databaseOptions
        self.shared = database.map { ($0, liveQueries ?? $0.makeDirectory()) }
    }

    /// The live queries this session registers in: its own directory over
    /// a shared database, else the database's.
    nonisolated func liveQueries(of database: LiveDatabase) -> LiveQueryDirectory {
        guard let shared, shared.database === database else { return database.directory }
        return shared.liveQueries
    }

    /// Starts serving the shared database: its live queries' events and
    /// its traced statements become notifications.
    func startShared() {
        guard let shared else { return }
        opened.withLock { $0 = Opened(database: shared.database) }
        let writer = self.writer
        let live = shared.liveQueries.events()
        let traces = shared.database.sessionEvents()
        forwarders = [
            Task { [weak self] in
                for await event in live {
                    guard let self else { return }
                    writer.send(self.notification(for: event))
                }
            },
            Task {
                for await event in traces {
                    if case .trace(let trace) = event { writer.send(Self.notification(for: trace)) }
                }
            },
        ]
        language.sessionDatabaseChanged(shared.database)
    }

    /// A database path, read from `directory` when relative.
    nonisolated func resolved(_ path: String) -> String {
        Self.resolve(path, in: directory)
    }

    /// A database path, read from a directory when it is a relative file
    /// path (URIs, `:memory:` and absolute paths are left alone).
    static func resolve(_ path: String, in directory: URL?) -> String {
        guard let directory, case .file(let file) = DatabaseLocation(path), !file.hasPrefix("/") else { return path }
        return directory.appendingPathComponent(file).path
    }

    /// The open database.
    ///
    /// - throws: -32010 when none is open.
    nonisolated func openDatabase() throws(ResponseError) -> LiveDatabase {
        let current = opened.withLock { $0 }
        guard let database = current.database else {
            var message = "No database open: send 'database/open' first"
            if let startupFailure = current.startupFailure { message += " (\(startupFailure))" }
            throw ResponseError(.noDatabase, message)
        }
        return database
    }

    private var database: LiveDatabase? {
        opened.withLock { $0.database }
    }

    /// Opens the database named on the command line or in `initialize`'s
    /// options; a failure is logged, leaves the session with no database
    /// (not the one it had), and is remembered for the -32010 errors that
    /// follow.
    func openAtStart(path: String, readonly: Bool) async {
        do {
            _ = try await open(path: path, readonly: readonly)
        } catch {
            ServerLog.warning("cannot open \(path): \(error.message)")
            await close()
            opened.withLock { $0.startupFailure = error.message }
        }
    }

    /// Sets the live queries' refresh budget (`nil`: no limit), for the
    /// database open and those opened later.
    func setRefreshBudget(_ budget: Duration?) async {
        databaseOptions.liveQueries.refreshBudget = budget
        await opened.withLock { $0.database }?.setRefreshBudget(budget)
    }

    /// Opens a database, closing the one open and dropping its live queries.
    func open(path: String, readonly: Bool) async throws(ResponseError) -> DatabaseOpenRequest.Result {
        if shared != nil {
            throw .invalidRequest("this session's database is the one sqlive was started with; it cannot open another")
        }
        var options = databaseOptions
        options.readonly = readonly
        let opened: LiveDatabase
        do {
            opened = try await LiveDatabase.open(DatabaseLocation(resolved(path)), options: options)
        } catch {
            throw ResponseError(error)
        }
        if let reason = opened.info.readonlyReason {
            ServerLog.warning("\(path) is opened read-only: \(reason)")
        }
        let dropped = await close()
        if !dropped.isEmpty {
            ServerLog.warning("opening \(path) dropped the live queries \(dropped.joined(separator: ", "))")
        }
        self.opened.withLock { $0 = Opened(database: opened) }
        opened.traceSettings = traceSettings
        startForwarding(opened)
        language.sessionDatabaseChanged(opened)
        let info = opened.info
        return DatabaseOpenRequest.Result(
            // The path as the client gave it, even when read from `directory`.
            path: resolved(path) == path ? info.path : path, readonly: info.readonly, sqliteVersion: info.sqliteVersion,
            journalMode: info.journalMode, droppedLiveQueries: dropped)
    }

    /// Closes the open database, if any.
    ///
    /// - returns: The names of the live queries dropped.
    @discardableResult
    func close() async -> [String] {
        guard let old = database else { return [] }
        opened.withLock { $0.database = nil }
        let directory = liveQueries(of: old)
        let dropped = directory.names
        for forwarder in forwarders { forwarder.cancel() }
        forwarders = []
        endChangeSubscriptions()
        language.sessionDatabaseChanged(nil)
        guard shared != nil else {
            await old.close()
            return dropped
        }
        // The client's own connection: what it left open is rolled back,
        // its locks released.
        client?.close()
        // The shared database stays open: only this session's live queries
        // go (none when they are someone else's, the REPL's).
        guard ownsLiveQueries else { return [] }
        await directory.unregisterAll()
        return dropped
    }

    /// Changes the trace settings, now and for databases opened later.
    func setTrace(_ settings: TraceSettings) {
        traceSettings = settings
        database?.traceSettings = settings
    }

    private func startForwarding(_ database: LiveDatabase) {
        // Subscribe now, before any live query is registered, so that no
        // event is missed.
        // One stream, in order: a refresh's trace line comes before the
        // change it delivered.
        let events = database.sessionEvents()
        let writer = self.writer
        forwarders = [
            Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    switch event {
                    case .live(let live): writer.send(self.notification(for: live))
                    case .liveBatch(let batch): writer.send(contentsOf: batch.map(self.notification(for:)))
                    case .trace(let trace): writer.send(Self.notification(for: trace))
                    }
                }
            }
        ]
    }

    /// The notification that tells a live-query event.
    nonisolated func notification(for event: LiveQueryEvent) -> OutgoingMessage {
        switch event {
        case .changed(let change):
            var diff: LiveQueryChangedNotification.Diff?
            var changes: LiveQueryChangedNotification.Changes?
            switch change.delivery {
            case .rows: break
            case .rowsAndDiff:
                let rowDiff = change.diff
                diff = .init(added: rowDiff.added.rpcRows, removed: rowDiff.removed.rpcRows)
            case .changesOnly:
                // Without changes (the columns changed), the rows go in full.
                changes = change.changes.map {
                    LiveQueryChangedNotification.Changes($0, columns: change.result.columns)
                }
            }
            let params = LiveQueryChangedNotification.Params(
                name: change.name, version: change.version, columns: change.result.columns,
                rows: changes == nil ? change.result.rows.rpcRows : nil, truncated: change.result.truncated,
                cause: change.cause.rawValue, coalesced: change.coalesced,
                elapsedMs: change.elapsed.protocolMilliseconds, diff: diff, tables: change.tables,
                total: change.result.total, changes: changes)
            return Self.notification(LiveQueryChangedNotification.self, params)
        case .failed(let name, let error):
            let params = LiveQueryErrorNotification.Params(name: name, error: ResponseError(error))
            return Self.notification(LiveQueryErrorNotification.self, params)
        case .databaseFileChanged(let change):
            let params = DatabaseFileChangedNotification.Params(
                path: change.path, reason: change.reason.rawValue, message: change.message)
            return Self.notification(DatabaseFileChangedNotification.self, params)
        }
    }

    /// The notification that tells a traced statement.
    static func notification(for event: TraceEvent) -> OutgoingMessage {
        let params = TraceStatementNotification.Params(
            sql: event.sql, elapsedMs: event.elapsed?.protocolMilliseconds, rows: event.rows,
            counters: event.counters.map(ProfileCounters.init), origin: event.origin.rawValue)
        return notification(TraceStatementNotification.self, params)
    }

    static func notification<N: NotificationType>(_ type: N.Type, _ params: N.Params) -> OutgoingMessage {
        OutgoingMessage.notification(method: N.method, params: params)
    }
}
