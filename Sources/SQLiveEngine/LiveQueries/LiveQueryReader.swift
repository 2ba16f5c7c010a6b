import Foundation
import GRDB
import SQLiveLocks

/// The connections live queries are read on, and which one each query needs.
///
/// Live queries show **committed data**: they are read on a read-only
/// connection of their own (`committed`), never on the session's. That
/// connection goes through the observer VFS: in rollback-journal modes it
/// holds no lock, and each read is proven whole or read again
/// (`ObserverVFS.read`), so `body` may run more than once. So a
/// refresh never waits for a statement or a transaction of the session,
/// rows the session has not committed never appear, and nothing needs
/// correcting at `ROLLBACK` — in every journal mode.
///
/// A query that reads what only the session's connection has — its temp
/// tables and views, `sqlite_temp_schema`, a database attached in memory —
/// is read on the session's connection instead (`Home.session`): it shows
/// what the session sees, uncommitted rows included, and is refreshed at
/// `ROLLBACK`. Databases the session attached from files are attached to
/// the committed connection too, under the same names.
///
/// An in-memory main database has no file another connection could open:
/// every query is then read on the session's connection.
final class LiveQueryReader: Sendable {
    /// Where a live query is read.
    enum Home: Hashable, Sendable {
        case committed
        case session
    }

    let session: any DatabaseWriter
    /// The read-only connection of committed reads; `nil` for an in-memory database.
    let committed: DatabaseQueue?

    /// What the committed connection was opened with: a query's own
    /// connection (`readAlone`) is opened the same way.
    private let committedPath: String?
    private let committedConfiguration: Configuration

    // Mutable State: guarded by the mutex; set by tests, read before each read.
    private let fault = Locked<(@Sendable () throws -> Void)?>(nil)
    // Mutable State: guarded by the mutex. The connections of live queries
    // read on their own (a slow one: `RefreshScheduler`'s own lanes), by
    // definition, and the files the session attached (mirrored on each).
    // Opened by `readAlone`, closed by `closeAlone` or `close`.
    private let alone = Locked<(connections: [LiveQueryDefinition: DatabaseQueue], attached: [String: String])>(
        ([:], [:]))

    init(session: any DatabaseWriter, location: DatabaseLocation, configuration: Configuration) throws {
        self.session = session
        var configuration = configuration
        configuration.readonly = true
        configuration.label = "sqlive.live"
        committedConfiguration = configuration
        committedPath = Self.committedPath(of: location)
        committed = try committedPath.map { try Self.openObserving($0, configuration) }
    }

    /// Opens a read-only observer connection (lock-free in rollback-journal
    /// modes: ObserverVFS). Opening reads the schema: a writer may overtake
    /// that read too, and it is read again.
    private static func openObserving(_ path: String, _ configuration: Configuration) throws -> DatabaseQueue {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try DatabaseQueue(path: path, configuration: configuration)
            } catch  where ObserverVFS.mayBeOvertaken(error) && attempt < ObserverVFS.maximumAttempts {
                usleep(1000)
            }
        }
    }

    /// What the committed connection opens: the path, or the URI without
    /// its `mode` (the connection is read-only whatever the URI says).
    /// It is read through the observer VFS, without a lock.
    static func committedPath(of location: DatabaseLocation) -> String? {
        guard location.filePath != nil else { return nil }
        guard case .uri(let uri) = location, let query = uri.firstIndex(of: "?") else {
            return ObserverVFS.openingName(location, vfs: ObserverVFS.observer)
        }
        let parameters = uri[uri.index(after: query)...].split(separator: "&").filter { !$0.hasPrefix("mode=") }
        let stripped = String(uri[..<query]) + (parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&"))
        return ObserverVFS.openingName(.uri(stripped), vfs: ObserverVFS.observer)
    }

    /// Makes the next reads fail before they start, as GRDB's `read` does
    /// when it cannot begin (tests only).
    func injectFault(_ fault: (@Sendable () throws -> Void)?) {
        self.fault.withLock { $0 = fault }
    }

    /// Reads on a home's connection; on the committed one, in one snapshot.
    func read<T: Sendable>(_ home: Home, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if let fault = fault.withLock({ $0 }) { try fault() }
        switch (home, committed) {
        case (.committed, let committed?):
            return try await readCommitted(on: committed, body)
        default:
            return try await session.writeWithoutTransaction(body)
        }
    }

    /// Reads committed data on an observer connection, in one snapshot.
    private func readCommitted<T: Sendable>(
        on connection: DatabaseQueue, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        do {
            return try await connection.writeWithoutTransaction { db in try ObserverVFS.read(db, body) }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_READONLY_ROLLBACK {
            // A writer crashed and left a hot journal, which only a
            // read-write connection may roll back: the session's, with
            // SQLite's ordinary locks, once.
            guard !session.configuration.readonly else { throw error }
            try await session.writeWithoutTransaction { db in
                try db.execute(sql: "SELECT 1 FROM sqlite_schema LIMIT 1")
            }
            return try await connection.writeWithoutTransaction { db in try ObserverVFS.read(db, body) }
        }
    }

    /// Lets the shared committed connection go of the pages it keeps, when
    /// they weigh at least `atLeast` bytes in the observer VFS (once a live
    /// query that read them is kept from rows, nothing reads them again
    /// there: see `RefreshScheduler.readBase`); the bytes let go of.
    func forgetCommittedPages(atLeast: Int) async -> Int {
        guard let committed else { return 0 }
        return (try? await committed.writeWithoutTransaction { db in ObserverVFS.forgetPages(db, atLeast: atLeast) })
            ?? 0
    }

    /// The bytes of pages the shared committed connection's observer VFS
    /// keeps (for tests).
    func committedPagesKept() async -> Int {
        guard let committed else { return 0 }
        return (try? await committed.writeWithoutTransaction { db in ObserverVFS.bytesKept(db) }) ?? 0
    }

    /// Reads committed data for one live query on a connection of its own
    /// (opened at its first read, like the committed one, with the
    /// session's file attachments), so that nothing it does waits for the
    /// other live queries or makes them wait.
    func readAlone<T: Sendable>(
        _ definition: LiveQueryDefinition, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        if let fault = fault.withLock({ $0 }) { try fault() }
        return try await readCommitted(on: try connection(alone: definition), body)
    }

    /// Whether live queries can be read on connections of their own (a file).
    var canReadAlone: Bool { committedPath != nil }

    private func connection(alone definition: LiveQueryDefinition) throws -> DatabaseQueue {
        if let connection = alone.withLock({ $0.connections[definition] }) { return connection }
        guard let committedPath else { throw SQLiveError.closed }
        var configuration = committedConfiguration
        configuration.label = "sqlive.live.alone"
        let connection = try Self.openObserving(committedPath, configuration)
        let attached = alone.withLock { $0.attached }
        try connection.writeWithoutTransaction { db in
            for (name, file) in attached {
                try db.execute(sql: "ATTACH DATABASE ? AS \(name.quotedDatabaseIdentifier)", arguments: [file])
            }
        }
        alone.withLock { $0.connections[definition] = connection }
        return connection
    }

    /// Closes a live query's own connection, if it has one (no read of it may run).
    func closeAlone(_ definition: LiveQueryDefinition) {
        guard let connection = alone.withLock({ $0.connections.removeValue(forKey: definition) }) else { return }
        do {
            try connection.close()
        } catch {
            Log.engine.warning("closing a live query's own connection: \(error)")
        }
    }

    /// How many live queries have a connection of their own (for tests).
    var aloneCount: Int { alone.withLock { $0.connections.count } }

    /// Where a live query must be read: on the session's connection when it
    /// reads its temp schema or a database attached without a file.
    ///
    /// The session's connection answers, with `EXPLAIN`: each database a
    /// statement reads has a `Transaction` instruction whose `p1` is the
    /// database's index in `PRAGMA database_list` (1 is temp).
    static func home(of definition: LiveQueryDefinition, _ db: Database, hasCommitted: Bool) throws -> Home {
        guard hasCommitted else { return .session }
        // temp, and databases attached without a file.
        let fileless = Set(
            try databases(db).filter { $0.index == 1 || ($0.index >= 2 && $0.file.isEmpty) }.map(\.index))
        let explain: [Row]
        do {
            let statement = try db.makeStatement(sql: "EXPLAIN " + definition.sql)
            if !definition.parameters.isEmpty {
                try statement.setArguments(definition.parameters.statementArguments)
            }
            explain = try Row.fetchAll(statement)
        } catch {
            // Not explainable (an EXPLAIN itself): read where it was prepared.
            return .session
        }
        for row in explain where (row["opcode"] as String?) == "Transaction" {
            let database: Int = row["p1"]
            if fileless.contains(database) { return .session }
        }
        return .committed
    }

    /// Attaches to the committed connection the file databases the session
    /// has attached, and detaches the ones it detached.
    ///
    /// Runs on the session's connection (it reads its `database_list`),
    /// after a script that may have attached or detached a database.
    func mirrorAttachments(from db: Database) throws {
        guard let committed else { return }
        let wanted = try Self.attachedFiles(db)
        try committed.writeWithoutTransaction { reader in try Self.mirror(wanted, on: reader) }
        // A query's own connection may be busy with a long read: it
        // follows after it, without the session waiting.
        let connections = alone.withLock { alone in
            alone.attached = wanted
            return Array(alone.connections.values)
        }
        for connection in connections {
            connection.asyncWriteWithoutTransaction { reader in
                do {
                    try Self.mirror(wanted, on: reader)
                } catch {
                    Log.engine.warning("attaching to a live query's own connection: \(error)")
                }
            }
        }
    }

    private static func mirror(_ wanted: [String: String], on reader: Database) throws {
        let present = try attachedFiles(reader)
        for (name, file) in present where wanted[name] != file {
            try reader.execute(sql: "DETACH DATABASE \(name.quotedDatabaseIdentifier)")
        }
        for (name, file) in wanted where present[name] != file {
            try reader.execute(sql: "ATTACH DATABASE ? AS \(name.quotedDatabaseIdentifier)", arguments: [file])
        }
    }

    /// The file databases attached to a connection, by name.
    static func attachedFiles(_ db: Database) throws -> [String: String] {
        var files: [String: String] = [:]
        for database in try databases(db) where database.index >= 2 && !database.file.isEmpty {
            files[database.name] = database.file
        }
        return files
    }

    /// `PRAGMA database_list`: 0 is main, 1 temp, 2 and up attached; `file`
    /// is empty for a database in memory.
    private static func databases(_ db: Database) throws -> [(index: Int, name: String, file: String)] {
        try Row.fetchAll(db, sql: "PRAGMA database_list").map { row in (row["seq"], row["name"], row["file"] ?? "") }
    }

    func close() {
        for definition in alone.withLock({ Array($0.connections.keys) }) { closeAlone(definition) }
        do {
            try committed?.close()
        } catch {
            Log.engine.warning("closing the live-query connection: \(error)")
        }
    }
}

extension String {
    /// Whether a script may attach or detach a database: it holds `tach` in
    /// any case (`ATTACH`, `DETACH`). A generous test of the bytes, run after
    /// every script, so it must cost next to nothing.
    var mayAttachOrDetach: Bool {
        utf8.withContiguousStorageIfAvailable(Self.holdsTach) ?? Self.holdsTach(Array(utf8))
    }

    private static let tach: [UInt8] = Array("tach".utf8)

    private static func holdsTach(_ bytes: some Collection<UInt8>) -> Bool {
        // ASCII letters compare lowercased with `| 0x20`.
        var matched = 0
        for byte in bytes {
            let lower = byte | 0x20
            if lower == tach[matched] {
                matched += 1
                if matched == 4 { return true }
            } else {
                matched = lower == UInt8(ascii: "t") ? 1 : 0
            }
        }
        return false
    }
}
