import CSQLiveSupport
import Foundation
import GRDB
import GRDBSQLite
import SQLiveLocks

/// A server's client's own connection to a database's file: one per tab of
/// the live page (and per MCP session over HTTP), so that what a client
/// does to its connection — a `TEMP` table, a `PRAGMA`, a `BEGIN` — is its
/// own, and a client that leaves takes its transaction with it.
///
/// It is opened as the session's connection is (`LiveDatabase.openCore`):
/// read-only when the database is, with the same busy timeout, foreign
/// keys off as in the sqlite3 shell, temporary storage in memory when
/// read-only, the WAL left alone at closing, through the tracking VFS when
/// it may write, and the database's statement trace. It has none of the
/// REPL's shell functions, and every script runs under `ClientGuard`.
///
/// Live queries stay the engine's: they read on their own connection, and
/// a commit here reaches them as another connection's does (the watcher
/// sees it at once; its cause is `external`).
public final class ClientConnection: Sendable {
    private let tracer: StatementTracer
    private let readonly: Bool
    /// Opens the connection again, on the file now at the path.
    private let open: @Sendable () throws -> DatabaseQueue
    // Mutable State: guarded by the mutex; `close`, `interrupt` and the
    // database's follow of a replaced file come from other threads than
    // `run`. `queue` is nil while the connection is let go for a follow,
    // until the next `run` opens it again.
    private struct State {
        var queue: DatabaseQueue?
        var closed = false
        var confined = false
    }
    private let state: Locked<State>

    fileprivate init(
        queue: DatabaseQueue, tracer: StatementTracer, readonly: Bool,
        open: @escaping @Sendable () throws -> DatabaseQueue
    ) {
        self.tracer = tracer
        self.readonly = readonly
        self.open = open
        state = Locked(State(queue: queue))
    }

    /// The connection, opened again if it was let go for a follow.
    private var queue: DatabaseQueue {
        get throws {
            if let queue = try state.withLock({ state throws -> DatabaseQueue? in
                guard !state.closed else { throw SQLiteFailure(SQLiveError.closed) }
                return state.queue
            }) {
                return queue
            }
            let reopened = try open()
            let confined = state.withLock { $0.confined }
            if confined {
                _ = reopened.writeWithoutTransaction { db in sqlive_confine_configuration(db.sqliteConnection) }
            }
            let kept = state.withLock { state -> DatabaseQueue? in
                guard !state.closed else { return nil }
                if let queue = state.queue { return queue }
                state.queue = reopened
                return reopened
            }
            if kept !== reopened { try? reopened.close() }
            guard let kept else { throw SQLiteFailure(SQLiveError.closed) }
            return kept
        }
    }

    /// Runs a script as `LiveDatabase.run(forClient: true)` does, on this
    /// connection, on the calling thread.
    ///
    /// - throws: `SQLiteFailure` (with the failing statement's index), or
    ///   the consumer's own error.
    public func run(
        _ script: String, parameters: QueryParameters = .none, maxRows: Int? = nil,
        isCancelled: (@Sendable () -> Bool)? = nil, consumer: inout some ResultConsumer
    ) throws {
        let queue = try queue
        let runner = ScriptRunner(script: script, parameters: parameters, maxRows: maxRows, tracer: tracer)
        let (tracer, level) = (tracer, ClientGuard.level(readonly: readonly))
        do {
            try queue.writeWithoutTransaction { db in
                tracer.matchSessionTrace(on: db)
                try ClientGuard.serving(db, level: level) {
                    try CancellationWatch.watching(db, isCancelled) {
                        _ = try GRDBAuthorizer.suspended(on: db) {
                            try runner.runDirectly(in: db, consumer: &consumer, ledger: nil)
                        }
                    }
                }
            }
        } catch let failure as SQLiteFailure {
            throw failure
        } catch let error as DatabaseError {
            throw SQLiteFailure(error)
        }
    }

    /// Configures the connection as an agent's (`LiveDatabase.confineSession`):
    /// defensive, no extensions, no ATTACH, no VACUUM.
    public func confine() throws(SQLiveError) {
        let queue: DatabaseQueue
        do {
            queue = try self.queue
        } catch {
            throw .closed
        }
        state.withLock { $0.confined = true }
        let code = queue.writeWithoutTransaction { db in sqlive_confine_configuration(db.sqliteConnection) }
        guard code == SQLITE_OK else {
            throw .sqlite(
                SQLiteFailure(code: code, extendedCode: code, message: "cannot confine a client's connection"))
        }
    }

    /// Interrupts the statement running here, if any.
    public func interrupt() {
        state.withLock { $0.queue }?.interrupt()
    }

    /// Rolls back what is open and closes the connection, releasing its
    /// locks: a statement running is interrupted first. Closing twice does
    /// nothing.
    public func close() {
        let queue = state.withLock { state -> DatabaseQueue? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.queue = nil }
            return state.queue
        }
        if let queue { Self.shut(queue) }
    }

    /// Lets the connection go, rolling back what is open, until the next
    /// `run` opens it again: the database follows its file replaced on
    /// disk (`LiveDatabase.follow`), and its connections to the old file
    /// must all be closed before any opens the new one (they share the
    /// `-shm` path).
    func letGo() {
        let queue = state.withLock { state -> DatabaseQueue? in
            defer { state.queue = nil }
            return state.queue
        }
        if let queue { Self.shut(queue) }
    }

    private static func shut(_ queue: DatabaseQueue) {
        queue.interrupt()
        queue.inDatabase { db in
            if sqlite3_get_autocommit(db.sqliteConnection) == 0 { try? db.execute(sql: "ROLLBACK") }
        }
        do {
            try queue.close()
        } catch {
            Log.engine.warning("closing a client's connection: \(error)")
        }
    }

    deinit { close() }
}

/// A client's connection, not kept alive (its owner closes it).
struct WeakClient: Sendable {
    weak var client: ClientConnection?
}

extension SQLiteFailure {
    init(_ error: SQLiveError) {
        self.init(code: 1, extendedCode: 1, message: error.description)
    }
}

extension LiveDatabase {
    /// A connection of a client's own to this database's file
    /// (`ClientConnection`), or nil when there can be no other one with
    /// the same contents: an in-memory database, a dqlite mirror (its
    /// statements run on the leader), a Litestream follow target. The
    /// caller closes it.
    public func makeClientConnection() throws(SQLiveError) -> ClientConnection? {
        guard remote == nil, location != .memory, !location.isImmutable,
            !ObserverVFS.isFollowTarget(location.filePath)
        else { return nil }
        let readonly = info.readonly
        let tracer = tracer
        let configuration = Self.sessionConfiguration(
            label: "sqlive.client", readonly: readonly, keepsTempInMemory: readonly,
            busyTimeout: options.busyTimeout, tracer: tracer)
        let openingName = readonly ? location.sqlitePath : ObserverVFS.openingName(location, vfs: ObserverVFS.tracking)
        let configured = configuration
        let open = { @Sendable in try DatabaseQueue(path: openingName, configuration: configured) }
        do {
            let client = ClientConnection(queue: try open(), tracer: tracer, readonly: readonly, open: open)
            clients.withLock { clients in
                clients.removeAll { $0.client == nil }
                clients.append(WeakClient(client: client))
            }
            return client
        } catch {
            throw SQLiveError.wrap(error)
        }
    }
}
