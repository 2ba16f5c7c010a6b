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
    private let queue: DatabaseQueue
    private let tracer: StatementTracer
    private let readonly: Bool
    // Mutable State: guarded by the mutex; `close` and `interrupt` come
    // from other threads than `run`.
    private let closed = Locked(false)

    fileprivate init(queue: DatabaseQueue, tracer: StatementTracer, readonly: Bool) {
        self.queue = queue
        self.tracer = tracer
        self.readonly = readonly
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
        guard !closed.withLock({ $0 }) else { throw SQLiteFailure(SQLiveError.closed) }
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
        let code = queue.writeWithoutTransaction { db in sqlive_confine_configuration(db.sqliteConnection) }
        guard code == SQLITE_OK else {
            throw .sqlite(
                SQLiteFailure(code: code, extendedCode: code, message: "cannot confine a client's connection"))
        }
    }

    /// Interrupts the statement running here, if any.
    public func interrupt() {
        queue.interrupt()
    }

    /// Whether a transaction is open here (`BEGIN` without its end).
    public var isInsideTransaction: Bool {
        guard !closed.withLock({ $0 }) else { return false }
        return queue.inDatabase { db in sqlite3_get_autocommit(db.sqliteConnection) == 0 }
    }

    /// Rolls back what is open and closes the connection, releasing its
    /// locks: a statement running is interrupted first. Closing twice does
    /// nothing.
    public func close() {
        let already = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !already else { return }
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
        var configuration = Configuration()
        configuration.label = "sqlive.client"
        configuration.readonly = readonly
        configuration.busyMode = .timeout(options.busyTimeout.timeInterval)
        configuration.allowsUnsafeTransactions = true
        configuration.foreignKeysEnabled = false
        let tracer = tracer
        configuration.prepareDatabase { db in
            WALClosing.prepare(db.sqliteConnection)
            if readonly { try db.execute(sql: "PRAGMA temp_store = MEMORY") }
            tracer.install(on: db)
        }
        let openingName = readonly ? location.sqlitePath : ObserverVFS.openingName(location, vfs: ObserverVFS.tracking)
        do {
            let queue = try DatabaseQueue(path: openingName, configuration: configuration)
            return ClientConnection(queue: queue, tracer: tracer, readonly: readonly)
        } catch {
            throw SQLiveError.wrap(error)
        }
    }
}
